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
	"time"
)

func clientActions() []action {
	return []action{
		{"create", "", "Create a client of its own for one CI job (POST /__sandbox/clients) and print its credentials and addresses, as lines a job can eval or append to $GITHUB_ENV.", runClientCreate},
		{"list", "", "List the clients of a running sandbox (never their secrets).", runClientList},
		{"delete", "ID", "Delete a client created at run time: its tokens stop working, its records, rules and journal entries go.", runClientDelete},
	}
}

func runClient(ctx context.Context, e env, args []string) error {
	return runAction(ctx, e, "client", clientActions(), args)
}

// createdClient is the part of POST /__sandbox/clients's answer the CLI
// prints.
type createdClient struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	Scope        string `json:"scope"`
	TokenURL     string `json:"tokenUrl"`
	AuthURL      string `json:"authUrl"`
	BaseURL      string `json:"baseUrl"`
	RootURL      string `json:"rootUrl"`
	ExpiresAt    string `json:"expiresAt"`
}

// clientCreateConfig is the flags of client create.
type clientCreateConfig struct {
	adminClient
	clientID      string
	roles         []string
	ttl           time.Duration
	tokenLifetime time.Duration
	format        string
}

func clientCreateFlags(e env) (*options, *clientCreateConfig) {
	c := &clientCreateConfig{}
	o := newOptions("client create", "Create a client for one CI job on a running sandbox and print REFERRALS_* lines (--format env) or the whole answer (--format json). The secret is printed this once.", e.getenv, e.stdout)
	addAdminFlags(o, &c.adminClient)
	o.String(&c.clientID, "client-id", "", "the new client's id (default: a generated ci-... id)")
	o.Env("client-id", "SANDBOX_NEW_CLIENT_ID")
	o.List(&c.roles, "roles", "roles of the new client, comma-separated (default: every partner role)")
	o.Duration(&c.ttl, "ttl", 24*time.Hour, "how long the client lives, so a job that crashes leaves nothing behind; 0: until deleted")
	o.Duration(&c.tokenLifetime, "token-lifetime", 0, "lifetime of the client's tokens (default: the sandbox's)")
	o.String(&c.format, "format", "env", "output: env (REFERRALS_*=... lines) or json")
	return o, c
}

func runClientCreate(ctx context.Context, e env, args []string) error {
	o, c := clientCreateFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	switch {
	case c.format != "env" && c.format != "json":
		return fmt.Errorf("%w: --format must be env or json, not %q", errUsage, c.format)
	case c.ttl < 0 || c.tokenLifetime < 0:
		return fmt.Errorf("%w: --ttl and --token-lifetime must not be negative", errUsage)
	}
	if err := c.open(); err != nil {
		return err
	}
	body := map[string]any{}
	if c.clientID != "" {
		body["clientId"] = c.clientID
	}
	if len(c.roles) > 0 {
		body["roles"] = c.roles
	}
	if c.ttl > 0 {
		body["ttl"] = c.ttl.String()
	}
	if c.tokenLifetime > 0 {
		body["tokenLifetimeSeconds"] = int(c.tokenLifetime.Seconds())
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/__sandbox/clients", body, &raw); err != nil {
		return err
	}
	if c.format == "json" {
		_, err := fmt.Fprintf(e.stdout, "%s\n", raw)
		return err
	}
	var created createdClient
	if err := json.Unmarshal(raw, &created); err != nil {
		return fmt.Errorf("read the created client: %w", err)
	}
	return printClientEnv(e.stdout, created)
}

// printClientEnv writes the lines a CI job evals or appends to $GITHUB_ENV.
// No value holds a character a shell would expand (ids are [A-Za-z0-9._-],
// secrets letters, digits and a "~" mid-word), so the same lines work for
// eval and for $GITHUB_ENV, which takes them literally.
func printClientEnv(w io.Writer, c createdClient) error {
	for _, kv := range [][2]string{
		{"REFERRALS_CLIENT_ID", c.ClientID},
		{"REFERRALS_CLIENT_SECRET", c.ClientSecret},
		{"REFERRALS_SCOPE", c.Scope},
		{"REFERRALS_AUTH_URL", c.AuthURL},
		{"REFERRALS_TOKEN_URL", c.TokenURL},
		{"REFERRALS_BASE_URL", c.BaseURL},
		{"REFERRALS_ROOT_URL", c.RootURL},
	} {
		if _, err := fmt.Fprintf(w, "%s=%s\n", kv[0], kv[1]); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

func runClientList(ctx context.Context, e env, args []string) error {
	a := &adminClient{}
	o := newOptions("client list", "List the clients of a running sandbox: id, origin (fixtures or runtime), expiry and roles. Secrets are never shown.", e.getenv, e.stdout)
	addAdminFlags(o, a)
	if err := o.parse(args); err != nil {
		return err
	}
	if err := a.open(); err != nil {
		return err
	}
	var list struct {
		Clients []struct {
			ClientID  string   `json:"clientId"`
			Origin    string   `json:"origin"`
			ExpiresAt string   `json:"expiresAt"`
			Roles     []string `json:"roles"`
		} `json:"clients"`
	}
	if err := a.do(ctx, http.MethodGet, "/__sandbox/clients", nil, &list); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tORIGIN\tEXPIRES\tROLES")
	for _, c := range list.Clients {
		expires := c.ExpiresAt
		if expires == "" {
			expires = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ClientID, c.Origin, expires, strings.Join(c.Roles, " "))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func runClientDelete(ctx context.Context, e env, args []string) error {
	a := &adminClient{}
	var id string
	o := newOptions("client delete ID", "Delete the runtime client ID: its tokens are refused from now on; its records, rules and journal entries go with it.", e.getenv, e.stdout)
	addAdminFlags(o, a)
	o.Arg(&id, "ID")
	if err := o.parse(args); err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: name the client: client delete ID (see 'client list')", errUsage)
	}
	if err := a.open(); err != nil {
		return err
	}
	if err := a.do(ctx, http.MethodDelete, "/__sandbox/clients/"+url.PathEscape(id), nil, nil); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "deleted client %s\n", id)
	return nil
}
