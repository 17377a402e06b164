// Command referrals-sandbox stands in for the patient-referrals service and
// its identity provider: `referrals-sandbox` (or `serve`) starts it; the
// other subcommands talk to a running one or prepare data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// env is what a subcommand gets from the process, injected for tests.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command struct {
	name, summary string
	run           func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "Start the sandbox (the default when no subcommand is given).", runServe},
		{"trust", "Trust the sandbox's local CA on this machine, once (system and NSS stores), for HTTPS from the first command.", runTrust},
		{"healthcheck", "Exit 0 when a running sandbox is healthy (for a container HEALTHCHECK).", runHealthcheck},
		{"token", "Print an access token from a running sandbox, for curl.", runToken},
		{"scenario", "List, apply or clear failure scenarios on a running sandbox.", runScenario},
		{"client", "Create, list or delete clients of a running sandbox, one per CI job.", runClient},
		{"clock", "Show, advance or reset sandbox time, for every client or one.", runClock},
		{"requests", "Print the request journal of a running sandbox, following its pages.", runRequests},
		{"report", "Judge the clients in a running sandbox's journal against the interface's rules; exit 1 on failures.", runReport},
		{"drift", "Compare the sandbox with the real service's development environment; exit 1 on differences.", runDrift},
		{"fixtures", "Generate a fixtures directory from a seed.", runFixtures},
		{"contract", "Check an OpenAPI document for --contract: the operations it takes over and the members the sandbox fills.", runContract},
		{"collections", "Write Postman and Bruno collections of the API, generated from its OpenAPI document.", runCollections},
		{"version", "Print the version.", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and maps its error to an exit status:
// 0 success, 1 failure, 2 usage error.
func run(ctx context.Context, e env, args []string) int {
	name := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && isHelpFlag(args[0]) {
		// Bare --help: the subcommands first, then serve's flags, since
		// serve is what runs without a subcommand.
		printCommands(e.stdout)
		fmt.Fprintln(e.stdout, "\nWithout a command, referrals-sandbox runs serve:")
	}
	if name == "help" {
		printCommands(e.stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, e, args)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errQuiet):
			return 1
		case errors.Is(err, errNoComparison):
			fmt.Fprintf(e.stderr, "referrals-sandbox %s: %v\n", name, err)
			return 2
		case errors.Is(err, errUsage):
			fmt.Fprintf(e.stderr, "referrals-sandbox %s: %v\nRun 'referrals-sandbox %s --help' for the flags.\n", name, err, name)
			return 2
		default:
			fmt.Fprintf(e.stderr, "referrals-sandbox %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(e.stderr, "referrals-sandbox: unknown command %q\n", name)
	printCommands(e.stderr)
	return 2
}

func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

func printCommands(w io.Writer) {
	fmt.Fprintln(w, "Usage: referrals-sandbox [command] [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'referrals-sandbox <command> --help' for a command's flags.")
}
