package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

func clockActions() []action {
	return []action{
		{"show", "", "Print the sandbox time, or one client's with --client-id.", runClockShow},
		{"advance", "DURATION", "Move sandbox time forward (e.g. 3600s) for every client, or for --client-id alone: its tokens expire without waiting.", runClockAdvance},
		{"reset", "", "Go back to real time, for every client or for --client-id alone.", runClockReset},
	}
}

func runClock(ctx context.Context, e env, args []string) error {
	return runAction(ctx, e, "clock", clockActions(), args)
}

// clockConfig is the flags of the clock actions.
type clockConfig struct {
	adminClient
	clientID string
}

func clockFlags(e env, action, summary string) (*options, *clockConfig) {
	c := &clockConfig{}
	o := newOptions("clock "+action, summary, e.getenv, e.stdout)
	addAdminFlags(o, &c.adminClient)
	o.String(&c.clientID, "client-id", "", "one client's clock alone (default: the sandbox-wide clock, which every client follows)")
	o.Env("client-id", "SANDBOX_CLOCK_CLIENT_ID")
	return o, c
}

// clockAnswer is GET or POST /__sandbox/clock's answer.
type clockAnswer struct {
	Now      string `json:"now"`
	Offset   string `json:"offset"`
	ClientID string `json:"clientId"`
}

func (c *clockConfig) print(e env, a clockAnswer) {
	who := "sandbox"
	if a.ClientID != "" {
		who = "client " + a.ClientID
	}
	fmt.Fprintf(e.stdout, "%s time %s (offset %s)\n", who, a.Now, a.Offset)
}

func runClockShow(ctx context.Context, e env, args []string) error {
	o, c := clockFlags(e, "show", "Print the sandbox time, or one client's with --client-id.")
	if err := o.parse(args); err != nil {
		return err
	}
	if err := c.open(); err != nil {
		return err
	}
	path := "/__sandbox/clock"
	if c.clientID != "" {
		path += "?clientId=" + url.QueryEscape(c.clientID)
	}
	var a clockAnswer
	if err := c.do(ctx, http.MethodGet, path, nil, &a); err != nil {
		return err
	}
	c.print(e, a)
	return nil
}

func runClockAdvance(ctx context.Context, e env, args []string) error {
	var given string
	o, c := clockFlags(e, "advance DURATION", "Move sandbox time forward by DURATION (e.g. 3600s, 2h) for every client, or for --client-id alone.")
	o.Arg(&given, "DURATION")
	if err := o.parse(args); err != nil {
		return err
	}
	d, err := time.ParseDuration(given)
	if err != nil {
		return fmt.Errorf("%w: give a duration such as 3600s or 2h: clock advance DURATION", errUsage)
	}
	return c.move(ctx, e, map[string]any{"advance": d.String()})
}

func runClockReset(ctx context.Context, e env, args []string) error {
	o, c := clockFlags(e, "reset", "Go back to real time, for every client or for --client-id alone.")
	if err := o.parse(args); err != nil {
		return err
	}
	return c.move(ctx, e, map[string]any{"reset": true})
}

func (c *clockConfig) move(ctx context.Context, e env, body map[string]any) error {
	if err := c.open(); err != nil {
		return err
	}
	if c.clientID != "" {
		body["clientId"] = c.clientID
	}
	var a clockAnswer
	if err := c.do(ctx, http.MethodPost, "/__sandbox/clock", body, &a); err != nil {
		return err
	}
	c.print(e, a)
	return nil
}
