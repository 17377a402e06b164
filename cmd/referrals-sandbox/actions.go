package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// action is one verb of a subcommand that has several (scenario list,
// fixtures generate).
type action struct {
	name, args, summary string
	run                 func(ctx context.Context, e env, args []string) error
}

// runAction dispatches to the action args[0] names. A missing or unknown
// action is a usage error; --help lists the actions.
func runAction(ctx context.Context, e env, command string, actions []action, args []string) error {
	if len(args) == 0 {
		printActions(e.stderr, command, actions)
		return fmt.Errorf("%w: name an action: %s", errUsage, actionNames(actions))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printActions(e.stdout, command, actions)
		return flag.ErrHelp
	}
	for _, a := range actions {
		if a.name == args[0] {
			return a.run(ctx, e, args[1:])
		}
	}
	return fmt.Errorf("%w: unknown action %q; want %s", errUsage, args[0], actionNames(actions))
}

func actionNames(actions []action) string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

func printActions(w io.Writer, command string, actions []action) {
	fmt.Fprintf(w, "Usage: referrals-sandbox %s <action> [flags]\n\nActions:\n", command)
	for _, a := range actions {
		fmt.Fprintf(w, "  %s\n      %s\n", strings.TrimSpace(a.name+" "+a.args), a.summary)
	}
	fmt.Fprintf(w, "\nRun 'referrals-sandbox %s <action> --help' for an action's flags.\n", command)
}
