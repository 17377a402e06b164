package sandboxtest

import (
	"log/slog"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Option changes how Start and StartServer set the sandbox up.
type Option func(*config)

// config is what the options build: the sandbox's own options, which are
// not part of this package's API, so they can change without breaking
// users' tests.
type config struct {
	sandbox sandbox.Config
}

// WithTLS serves HTTPS with a certificate from a CA made for this sandbox;
// Client trusts it. The certificate covers localhost, 127.0.0.1 and ::1
// plus extraHosts, and Client dials the sandbox for every extra host:
// WithTLS("login.microsoftonline.com") lets MSAL's instance discovery,
// which always asks that host, reach the sandbox instead.
func WithTLS(extraHosts ...string) Option {
	return func(c *config) {
		c.sandbox.TLS = true
		c.sandbox.TLSHosts = append(c.sandbox.TLSHosts, extraHosts...)
	}
}

// WithFixturesDir replaces the embedded fixtures with a directory holding
// clients.json and trials.json (and optionally referrals.json and
// qualified-referrals.json), as --fixtures does.
func WithFixturesDir(dir string) Option {
	return func(c *config) { c.sandbox.FixturesDir = dir }
}

// WithScenario activates a named scenario (or a scenario JSON file, by a
// name ending in .json) for every client from the start. Repeatable.
func WithScenario(name string) Option {
	return func(c *config) { c.sandbox.ScenarioNames = append(c.sandbox.ScenarioNames, name) }
}

// WithRateLimit limits each client to rps requests per second on the API
// and ping, with bursts of burst. Without it the sandbox does not limit.
func WithRateLimit(rps float64, burst int) Option {
	return func(c *config) { c.sandbox.RateLimit, c.sandbox.RateBurst = rps, burst }
}

// WithTokenLifetime sets the lifetime of access tokens (default 3599s); a
// client's tokenLifetimeSeconds in the fixtures still overrides it.
func WithTokenLifetime(d time.Duration) Option {
	return func(c *config) { c.sandbox.TokenLifetime = d }
}

// WithTenant sets the tenant GUID of AuthURL and of every token, for a
// client configured with its real tenant.
func WithTenant(tenant string) Option {
	return func(c *config) { c.sandbox.Tenant = tenant }
}

// WithAdminToken protects the admin API with a bearer token, as
// --admin-token does. The helpers of Sandbox send it themselves.
func WithAdminToken(token string) Option {
	return func(c *config) { c.sandbox.AdminToken = token }
}

// WithLogger sends the sandbox's logs (requests, scenarios fired, clock
// moves; never secrets) to logger. Without it they are discarded.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) { c.sandbox.Logger = logger }
}

// WithUpstream makes the sandbox a recording proxy in front of a real
// service, as serve --upstream and --upstream-auth-url do: partner calls go
// to rootURL (the real {root_url}) and token requests to
// authURL/oauth2/v2.0/token, and their answers are journaled with patient
// data replaced.
func WithUpstream(rootURL, authURL string) Option {
	return func(c *config) {
		c.sandbox.Upstream = &sandbox.UpstreamConfig{RootURL: rootURL, AuthURL: authURL}
	}
}
