package sandboxtest

import (
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox"
)

// Option changes how Start and StartServer set the sandbox up.
type Option func(*sandbox.Options)

// WithTLS serves HTTPS with a certificate from a CA made for this sandbox;
// HTTPClient trusts it. The certificate covers localhost, 127.0.0.1 and ::1
// plus extraHosts, and HTTPClient dials the sandbox for every extra host:
// WithTLS("login.microsoftonline.com") lets MSAL's instance discovery,
// which always asks that host, reach the sandbox instead.
func WithTLS(extraHosts ...string) Option {
	return func(o *sandbox.Options) {
		o.TLS = true
		o.TLSHosts = append(o.TLSHosts, extraHosts...)
	}
}

// WithFixturesDir replaces the embedded fixtures with a directory holding
// clients.json and trials.json (and optionally referrals.json and
// qualified-referrals.json).
func WithFixturesDir(dir string) Option {
	return func(o *sandbox.Options) { o.FixturesDir = dir }
}

// WithScenario activates a named scenario (or a scenario JSON file, by a
// name ending in .json) for every client from the start. Repeatable.
func WithScenario(name string) Option {
	return func(o *sandbox.Options) { o.ScenarioNames = append(o.ScenarioNames, name) }
}

// WithRateLimit limits each client to rps requests per second on the API
// and ping, with bursts of burst. Without it the sandbox does not limit.
func WithRateLimit(rps float64, burst int) Option {
	return func(o *sandbox.Options) { o.RateLimit, o.RateBurst = rps, burst }
}

// WithTokenLifetime sets the lifetime of access tokens (default 3599s); a
// client's tokenLifetimeSeconds in the fixtures still overrides it.
func WithTokenLifetime(d time.Duration) Option {
	return func(o *sandbox.Options) { o.TokenLifetime = d }
}

// WithOptions edits the sandbox options directly, for anything the other
// options do not cover (tenant, environment, admin token, logger, clock).
// The address is not an option: the sandbox always listens on a free
// loopback port.
func WithOptions(edit func(*sandbox.Options)) Option {
	return Option(edit)
}
