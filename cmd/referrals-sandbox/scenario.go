package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
)

func scenarioActions() []action {
	return []action{
		{"list", "", "Print the scenario library: each scenario's name, whether it is active, and what it does.", runScenarioList},
		{"apply", "NAME", "Activate a library scenario (POST /__sandbox/library/NAME), for every client or only --client-id.", runScenarioApply},
		{"clear", "", "Deactivate every scenario and remove every rule (DELETE /__sandbox/scenarios).", runScenarioClear},
	}
}

func runScenario(ctx context.Context, e env, args []string) error {
	return runAction(ctx, e, "scenario", scenarioActions(), args)
}

// scenarioFlags makes the flag set of scenario list or clear; every action
// talks to the admin API.
func scenarioFlags(e env, action, summary string) (*options, *adminClient) {
	a := &adminClient{}
	o := newOptions("scenario "+action, summary, e.getenv, e.stdout)
	addAdminFlags(o, a)
	return o, a
}

// libraryView is the answer of GET /__sandbox/library.
type libraryView struct {
	Scenarios []struct {
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Rules       []json.RawMessage `json:"rules"`
	} `json:"scenarios"`
	Active []struct {
		Name     string `json:"name"`
		ClientID string `json:"clientId"`
	} `json:"active"`
}

func runScenarioList(ctx context.Context, e env, args []string) error {
	o, a := scenarioFlags(e, "list", "Print the scenario library of a running sandbox: name, whether active (and for which client), rule count and description.")
	if err := o.parse(args); err != nil {
		return err
	}
	if err := a.open(); err != nil {
		return err
	}
	var lib libraryView
	if err := a.do(ctx, http.MethodGet, "/__sandbox/library", nil, &lib); err != nil {
		return err
	}
	return printLibrary(e.stdout, lib)
}

// printLibrary writes the library as an aligned table.
func printLibrary(w io.Writer, lib libraryView) error {
	active := map[string][]string{}
	for _, act := range lib.Active {
		active[act.Name] = append(active[act.Name], act.ClientID)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACTIVE\tRULES\tDESCRIPTION")
	for _, sc := range lib.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", sc.Name, activeLabel(active[sc.Name]), len(sc.Rules), sc.Description)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// activeLabel says whether a scenario is active and for whom: an
// activation without a client id applies to every client.
func activeLabel(clientIDs []string) string {
	if len(clientIDs) == 0 {
		return "-"
	}
	var who []string
	for _, id := range clientIDs {
		if id == "" {
			id = "all clients"
		}
		who = append(who, id)
	}
	if len(who) == 1 && who[0] == "all clients" {
		return "yes"
	}
	return "yes (" + strings.Join(who, ", ") + ")"
}

// applyConfig is the flags of scenario apply.
type applyConfig struct {
	adminClient
	clientID string
}

func scenarioApplyFlags(e env) (*options, *applyConfig) {
	c := &applyConfig{}
	o := newOptions("scenario apply NAME", "Activate the library scenario NAME on a running sandbox (see 'scenario list'). Its rules apply to every client, or only to --client-id.", e.getenv, e.stdout)
	addAdminFlags(o, &c.adminClient)
	o.String(&c.clientID, "client-id", "", "apply the scenario to this client only (default: every client)")
	o.Env("client-id", "SANDBOX_SCENARIO_CLIENT_ID")
	return o, c
}

func runScenarioApply(ctx context.Context, e env, args []string) error {
	var name string
	o, a := scenarioApplyFlags(e)
	o.Arg(&name, "NAME")
	if err := o.parse(args); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("%w: name the scenario to apply: scenario apply NAME (see 'scenario list')", errUsage)
	}
	if err := a.open(); err != nil {
		return err
	}
	var body any
	if a.clientID != "" {
		body = map[string]string{"clientId": a.clientID}
	}
	var answer struct {
		Rules []json.RawMessage `json:"rules"`
	}
	if err := a.do(ctx, http.MethodPost, "/__sandbox/library/"+url.PathEscape(name), body, &answer); err != nil {
		return err
	}
	who := "every client"
	if a.clientID != "" {
		who = "client " + a.clientID
	}
	rules := "rules"
	if len(answer.Rules) == 1 {
		rules = "rule"
	}
	fmt.Fprintf(e.stdout, "applied %s for %s (%d %s)\n", name, who, len(answer.Rules), rules)
	return nil
}

func runScenarioClear(ctx context.Context, e env, args []string) error {
	o, a := scenarioFlags(e, "clear", "Deactivate every scenario and remove every rule on a running sandbox.")
	if err := o.parse(args); err != nil {
		return err
	}
	if err := a.open(); err != nil {
		return err
	}
	if err := a.do(ctx, http.MethodDelete, "/__sandbox/scenarios", nil, nil); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "cleared every scenario and rule")
	return nil
}
