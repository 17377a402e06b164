package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/drift"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
)

// driftSecretEnv holds the upstream client secret: never a flag, since
// command lines show in ps.
const driftSecretEnv = "SANDBOX_DRIFT_CLIENT_SECRET"

// errNoComparison is a drift run that could not compare (a side
// unreachable, credentials refused): exit status 2, like a usage error.
var errNoComparison = errors.New("no comparison")

// Clients of the embedded fixtures drift uses against a sandbox.
const (
	driftSandboxClient     = "sandbox-partner"
	driftSandboxSecret     = "sandbox-partner-secret"
	driftOtherAPIClient    = "sandbox-other-api"
	driftOtherAPISecret    = "sandbox-other-api-secret"
	driftExpiredClient     = "sandbox-partner-2"
	driftExpiredSecret     = "sandbox-partner-2-secret"
	driftDefaultOtherScope = "https://graph.microsoft.com/.default"
)

type driftConfig struct {
	upstream, upstreamAuth, clientID, scope, otherScope string
	url, sandboxAuth, format, allow, writes, recording  string
	maxRPS                                              float64
}

func driftFlags(e env) (*options, *driftConfig) {
	c := &driftConfig{}
	o := newOptions("drift",
		"Probe the real service (the upstream) and a sandbox with the same requests and report every difference in form: "+
			"status codes, headers, JSON shapes, the token response. The upstream client secret comes only from "+
			driftSecretEnv+". Exits 0 when nothing differs beyond --allow, 1 when something does, 2 when no comparison could be made.",
		e.getenv, e.stdout)
	o.String(&c.upstream, "upstream", "", "the upstream's root_url (its API is under ROOT_URL/api/v1)")
	o.Env("upstream", "SANDBOX_DRIFT_UPSTREAM")
	o.String(&c.upstreamAuth, "upstream-auth-url", "", "the upstream's auth_url (its token endpoint is AUTH_URL/oauth2/v2.0/token)")
	o.Env("upstream-auth-url", "SANDBOX_DRIFT_UPSTREAM_AUTH_URL")
	o.String(&c.clientID, "client-id", "", "the client id the upstream issued you (development credentials)")
	o.Env("client-id", "SANDBOX_DRIFT_CLIENT_ID")
	o.String(&c.scope, "scope", "", "the scope the upstream issued you")
	o.Env("scope", "SANDBOX_DRIFT_SCOPE")
	o.String(&c.otherScope, "other-scope", driftDefaultOtherScope, "a scope of another API your client can get a token for, to probe tokens for another audience (\"\" skips those probes)")
	o.Env("other-scope", "SANDBOX_DRIFT_OTHER_SCOPE")
	o.String(&c.url, "url", "", "a running sandbox's root URL (default: a sandbox started in this process with the embedded fixtures)")
	o.Env("url", "SANDBOX_DRIFT_URL")
	o.String(&c.sandboxAuth, "sandbox-auth-url", "", "with --url, that sandbox's auth_url (default: URL/"+idp.DefaultTenant+")")
	o.String(&c.format, "format", "text", "report format: "+strings.Join(drift.Formats, ", "))
	o.String(&c.allow, "allow", "", "file of accepted differences: one per line, the key the JSON shows, a space, the reason")
	o.String(&c.writes, "writes", "", "also submit synthetic referrals (drift- ids, generated names) to this upstream trial, read them back and send the documented validation failures")
	o.Float(&c.maxRPS, "max-rps", drift.DefaultMaxRPS, "most requests a second to each side")
	o.String(&c.recording, "recording", "", "compare a recording of the real service (serve --upstream) with the sandbox instead of probing live: a sandbox's root URL (its journal) or a file of journal entries (requests --json)")
	// Every flag reads a SANDBOX_DRIFT_ variable: --format and --url mean
	// other things to other subcommands.
	for _, name := range []string{"sandbox-auth-url", "format", "allow", "writes", "max-rps", "recording"} {
		o.Env(name, "SANDBOX_DRIFT_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	}
	return o, c
}

func (c *driftConfig) check(secret string) error {
	switch {
	case c.recording != "" && c.upstream != "":
		return fmt.Errorf("%w: --recording compares a recording; it takes no --upstream", errUsage)
	case c.recording != "":
		return c.checkOutput()
	case c.upstream == "" || c.upstreamAuth == "" || c.clientID == "" || c.scope == "":
		return fmt.Errorf("%w: --upstream, --upstream-auth-url, --client-id and --scope are required", errUsage)
	case secret == "":
		return fmt.Errorf("%w: set %s to the upstream client secret (never a flag: command lines show in ps)", errUsage, driftSecretEnv)
	}
	return c.checkOutput()
}

func (c *driftConfig) checkOutput() error {
	switch {
	case !slices.Contains(drift.Formats, c.format):
		return fmt.Errorf("%w: --format must be one of %s, not %q", errUsage, strings.Join(drift.Formats, ", "), c.format)
	case c.maxRPS <= 0:
		return fmt.Errorf("%w: --max-rps must be above 0", errUsage)
	}
	return nil
}

func runDrift(ctx context.Context, e env, args []string) error {
	o, c := driftFlags(e)
	if err := o.parse(args); err != nil {
		return err
	}
	secret := e.getenv(driftSecretEnv)
	if err := c.check(secret); err != nil {
		return err
	}
	cfg := drift.Config{MaxRPS: c.maxRPS}
	if c.allow != "" {
		f, err := os.Open(c.allow)
		if err != nil {
			return fmt.Errorf("%w: --allow: %v", errUsage, err)
		}
		cfg.Allow, err = drift.ParseAllowList(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%w: --allow %s: %v", errUsage, c.allow, err)
		}
	}
	if c.recording != "" {
		return runDriftRecording(ctx, e, c, cfg)
	}
	creds := drift.Credentials{ClientID: c.clientID, ClientSecret: secret, Scope: c.scope}
	cfg.Upstream = drift.Target{Name: "upstream", RootURL: c.upstream, AuthURL: c.upstreamAuth, Credentials: creds}
	if c.otherScope != "" {
		cfg.Upstream.OtherAudience = drift.Credentials{ClientID: c.clientID, ClientSecret: secret, Scope: c.otherScope}
	}
	cfg.WritesTrial = c.writes
	sandboxTarget, stop, err := c.sandboxTarget()
	if err != nil {
		return err
	}
	defer stop()
	cfg.Sandbox = sandboxTarget
	report, err := drift.Run(ctx, cfg)
	if report != nil {
		if serr := report.WriteSummary(e.stderr); serr != nil {
			return serr
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errNoComparison, err)
	}
	return driftVerdict(e, report, c.format)
}

// driftVerdict prints the report and turns it into the exit status.
func driftVerdict(e env, report *drift.Report, format string) error {
	if err := report.Write(e.stdout, format); err != nil {
		return err
	}
	if report.Failed() {
		return errQuiet // the report says what differs
	}
	return nil
}

// sandboxTarget is the sandbox side: the one at --url, or one started in
// this process with the embedded fixtures (stop stops it).
func (c *driftConfig) sandboxTarget() (drift.Target, func(), error) {
	partner := drift.Credentials{ClientID: driftSandboxClient, ClientSecret: driftSandboxSecret, Scope: idp.DefaultResource + "/.default"}
	other := drift.Credentials{ClientID: driftOtherAPIClient, ClientSecret: driftOtherAPISecret, Scope: "api://other-api/.default"}
	if c.url != "" {
		root := strings.TrimRight(c.url, "/")
		auth := c.sandboxAuth
		if auth == "" {
			auth = root + "/" + idp.DefaultTenant
		}
		return drift.Target{Name: "sandbox", RootURL: root, AuthURL: auth, Credentials: partner, OtherAudience: other}, func() {}, nil
	}
	root, in, stop, err := startDriftSandbox()
	if err != nil {
		return drift.Target{}, nil, err
	}
	auth := in.Provider.AuthURL(root)
	expiring := drift.Credentials{ClientID: driftExpiredClient, ClientSecret: driftExpiredSecret, Scope: partner.Scope}
	return drift.Target{
		Name: "sandbox", RootURL: root, AuthURL: auth, Credentials: partner, OtherAudience: other,
		// The second partner's own clock moves two hours on, past any
		// token's lifetime, without touching the first partner's.
		ExpiredToken: drift.ExpiredBy(auth, expiring, func() { in.ClientClocks.Advance(driftExpiredClient, 2*time.Hour) }),
	}, stop, nil
}

// startDriftSandbox serves a sandbox on a free loopback port as serve
// would by default (rate limited, so RateLimit-* headers are compared).
func startDriftSandbox() (string, *sandbox.Instance, func(), error) {
	in, err := sandbox.Open(sandbox.Config{RateLimit: sandbox.DefaultRateLimit, RateBurst: sandbox.DefaultRateBurst})
	if err != nil {
		return "", nil, nil, fmt.Errorf("start the sandbox: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, errors.Join(fmt.Errorf("start the sandbox: %w", err), in.Close())
	}
	server := sandbox.NewHTTPServer(in.Server, slog.New(slog.DiscardHandler))
	done := make(chan error, 1)
	go func() { done <- server.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if server.Shutdown(ctx) != nil {
			_ = server.Close()
		}
		<-done // Serve's error after Shutdown is always ErrServerClosed
		_ = in.Close()
	}
	return "http://" + ln.Addr().String(), in, stop, nil
}

// runDriftRecording compares a recording with the sandbox: nothing goes to
// the real service.
func runDriftRecording(ctx context.Context, e env, c *driftConfig, cfg drift.Config) error {
	entries, err := readJournal(ctx, e, c.recording)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoComparison, err)
	}
	recorded := recordedExchanges(entries)
	if len(recorded) == 0 {
		return fmt.Errorf("%w: %s holds no answer of the real service (record with serve --upstream)", errNoComparison, c.recording)
	}
	sandboxTarget, stop, err := c.sandboxTarget()
	if err != nil {
		return err
	}
	defer stop()
	cfg.Sandbox = sandboxTarget
	report, err := drift.RunRecording(ctx, cfg, recorded)
	if report != nil {
		if serr := report.WriteSummary(e.stderr); serr != nil {
			return serr
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errNoComparison, err)
	}
	return driftVerdict(e, report, c.format)
}

// recordedExchanges are the journal entries the real service answered.
func recordedExchanges(entries []journal.Entry) []drift.Recorded {
	var out []drift.Recorded
	for _, e := range entries {
		u := e.Upstream
		if u == nil || u.Error != "" || u.Status == 0 {
			continue
		}
		header := http.Header{}
		for name, value := range u.Headers {
			header.Set(name, value)
		}
		_, authorized := e.Headers["Authorization"]
		out = append(out, drift.Recorded{
			Method: e.Method, Path: e.Path, Query: e.Query, Authorized: authorized,
			RequestBody: u.RequestBody, Status: u.Status, Header: header, Body: u.Body,
		})
	}
	return out
}
