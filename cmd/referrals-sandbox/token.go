package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
)

// Credentials token asks for unless told otherwise: the embedded partner
// with every permission, whose secret is public by design.
const (
	defaultClientID     = "sandbox-partner"
	defaultClientSecret = "sandbox-partner-secret"
	defaultScope        = idp.DefaultResource + "/.default"
)

// tokenConfig is token's flags.
type tokenConfig struct {
	target
	clientID     string
	clientSecret string
	scope        string
	tenant       string
}

func tokenFlags(e env) (*options, *tokenConfig) {
	c := &tokenConfig{}
	o := newOptions("token",
		"Print an access token from a running sandbox's token endpoint (client credentials grant) and nothing else, "+
			`for curl: curl -H "Authorization: Bearer $(referrals-sandbox token)" ...`,
		e.getenv, e.stdout)
	addTargetFlags(o, &c.target, defaultTarget(e.getenv))
	o.String(&c.clientID, "client-id", defaultClientID, "client_id to ask for a token with")
	o.Env("client-id", "SANDBOX_TOKEN_CLIENT_ID")
	o.String(&c.clientSecret, "client-secret", defaultClientSecret, "client_secret of --client-id")
	o.Env("client-secret", "SANDBOX_TOKEN_CLIENT_SECRET")
	o.String(&c.scope, "scope", defaultScope, "scope to ask for: an API resource followed by /.default")
	o.String(&c.tenant, "tenant", idp.DefaultTenant, "tenant in the token endpoint's path (the sandbox's --tenant)")
	return o, c
}

func (c *tokenConfig) check() error {
	switch {
	case c.clientID == "":
		return fmt.Errorf("%w: --client-id must not be empty", errUsage)
	case c.tenant == "" || strings.Contains(c.tenant, "/"):
		return fmt.Errorf("%w: --tenant must be a tenant id without slashes, not %q", errUsage, c.tenant)
	}
	return c.target.check()
}

// tokenAnswer is the token endpoint's answer, success or error, in the
// shape Entra ID uses.
type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

func runToken(ctx context.Context, e env, args []string) error {
	o, c := tokenFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	token, err := c.fetch(ctx)
	if err != nil {
		return redact(err, c.clientSecret)
	}
	fmt.Fprintln(e.stdout, token)
	return nil
}

// fetch asks the token endpoint for a token and returns it, or an error
// carrying the endpoint's error code and AADSTS description.
func (c *tokenConfig) fetch(ctx context.Context) (string, error) {
	client, err := c.client()
	if err != nil {
		return "", err
	}
	endpoint := c.endpoint("/" + url.PathEscape(c.tenant) + "/oauth2/v2.0/token")
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {c.clientID},
		"client_secret": {c.clientSecret},
		"scope":         {c.scope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("build token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", c.withCAHint(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", fmt.Errorf("token request: read answer: %w", err)
	}
	var answer tokenAnswer
	jsonErr := json.Unmarshal(body, &answer)
	switch {
	case resp.StatusCode == http.StatusOK && jsonErr == nil && answer.AccessToken != "":
		return answer.AccessToken, nil
	case answer.Error != "":
		return "", fmt.Errorf("token endpoint %s answered %s: %s: %s", endpoint, resp.Status, answer.Error, answer.ErrorDescription)
	}
	return "", fmt.Errorf("token endpoint %s answered %s without a token (is --url a sandbox?): %s", endpoint, resp.Status, snippet(body))
}

// snippet is the start of an unexpected answer, for an error message.
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// minRedactedSecret is the shortest secret redact looks for: a shorter one
// (a typo such as "x") occurs in ordinary words, and replacing it would
// garble the message while hiding nothing worth hiding.
const minRedactedSecret = 6

// redact removes the client secret from an error before it is printed: a
// server that echoes it (a proxy, a wrong --url) must not put it on stderr,
// which ends up in CI logs.
func redact(err error, secret string) error {
	if len(secret) < minRedactedSecret || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "[client secret]"))
}
