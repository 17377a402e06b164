package idp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/internal/logthrottle"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/referrals"
)

// Defaults of the identity provider.
const (
	// DefaultTenant is the sandbox's fixed tenant GUID.
	DefaultTenant = "5f0a9c4e-3b1d-4e8a-9c27-0d1e2f3a4b5c"
	// DefaultResource is the API resource of the referrals API; clients ask
	// for it as api://referrals-sandbox/.default.
	DefaultResource = "api://referrals-sandbox"
	// DefaultTokenLifetime is the documented lifetime (section 2.4, 8).
	DefaultTokenLifetime = 3599 * time.Second
)

// Config injects what the provider needs. Clients, Keys and Clock are
// required; the rest has defaults.
type Config struct {
	// Tenant is the tenant GUID in every path and in the tid claim.
	Tenant string
	// Environment is the environment the sandbox runs as; clients of the
	// other environment do not exist.
	Environment string
	// Clients are the registered OAuth clients.
	Clients []referrals.Client
	// TokenLifetime is the default access token lifetime.
	TokenLifetime time.Duration
	// Keys sign and verify tokens.
	Keys *Keys
	// PublicURL, when set, is the base URL advertised in issuer and
	// endpoints instead of the one the request came in on (for containers).
	PublicURL string
	// Hosts are the extra host names the sandbox serves (--tls-host); with
	// the loopback names and the PublicURL host they make HostNames.
	Hosts []string
	// TokenVersion is the access-token format, TokenV2 (the default) or
	// TokenV1.
	TokenVersion TokenVersion
	// Clock is the sandbox clock.
	Clock clock.Clock
	// ClockSkew is the leeway on exp and nbf; default 0, since the sandbox
	// issues and checks tokens on one clock (see timing.go).
	ClockSkew time.Duration
	// Logger receives one line per token request; never secrets or tokens.
	Logger *slog.Logger
}

// Provider is the mock identity provider.
type Provider struct {
	cfg     Config
	clients *registry
	log     *slog.Logger
	cache   *validationCache
	// clientClock is each client's time; Clock for all until
	// UseClientClock.
	clientClock func(clientID string) time.Time
	issued      issuedHighWater
	names       HostNames
	// redactor hides credentials in what the logs carry of a request;
	// refusals keeps refused callers from flooding the log.
	redactor *redact.Redactor
	refusals *logthrottle.Throttle
}

// New checks cfg and returns a Provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Keys == nil {
		return nil, errors.New("idp: no signing keys")
	}
	if cfg.Clock == nil {
		return nil, errors.New("idp: no clock")
	}
	if cfg.Tenant == "" {
		cfg.Tenant = DefaultTenant
	}
	if strings.ContainsAny(cfg.Tenant, "/?#") {
		return nil, fmt.Errorf("idp: tenant %q must be a single path segment", cfg.Tenant)
	}
	if cfg.Environment == "" {
		cfg.Environment = referrals.EnvironmentDevelopment
	}
	switch cfg.TokenVersion {
	case 0:
		cfg.TokenVersion = DefaultTokenVersion
	case TokenV1, TokenV2:
	default:
		return nil, fmt.Errorf("idp: token version %d: want 1 or 2", cfg.TokenVersion)
	}
	if cfg.TokenLifetime == 0 {
		cfg.TokenLifetime = DefaultTokenLifetime
	}
	if cfg.ClockSkew < 0 {
		return nil, fmt.Errorf("idp: clock skew %s is negative", cfg.ClockSkew)
	}
	if cfg.TokenLifetime < time.Second {
		return nil, fmt.Errorf("idp: token lifetime %s is under one second", cfg.TokenLifetime)
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	clients := newRegistry(cfg.Environment, cfg.Clients, cfg.Clock)
	clientClock := func(string) time.Time { return cfg.Clock.Now() }
	return &Provider{cfg: cfg, clients: clients, log: cfg.Logger, cache: newValidationCache(), clientClock: clientClock,
		names: NewHostNames(cfg.PublicURL, cfg.Hosts), redactor: redact.New(clientSecrets(cfg.Clients)),
		refusals: logthrottle.New(time.Second, time.Now)}, nil
}

// clientSecrets are the fixture clients' secrets, which the redactor hides
// wherever they show up (runtime clients' secrets have Entra's shape, which
// it hides anyway).
func clientSecrets(clients []referrals.Client) []string {
	out := make([]string, 0, len(clients))
	for _, c := range clients {
		out = append(out, c.ClientSecret)
	}
	return out
}

// Redactor hides credentials in what the journal and the logs keep of a
// request: by name, by shape and the fixture clients' secrets.
func (p *Provider) Redactor() *redact.Redactor { return p.redactor }

// now is clientID's time.
func (p *Provider) now(clientID string) time.Time { return p.clientClock(clientID) }

// Tenant is the tenant GUID.
func (p *Provider) Tenant() string { return p.cfg.Tenant }

// Clients returns the clients that exist in this environment now: the
// fixtures' in fixture order, then those created at run time.
func (p *Provider) Clients() []referrals.Client { return p.clients.list() }

// Client returns the client registered under id in this environment, if it
// exists now.
func (p *Provider) Client(id string) (referrals.Client, bool) { return p.clients.get(id) }

// Register adds the identity provider's routes to r.
func (p *Provider) Register(r *mux.Router) {
	r.Handle("/common/discovery/instance", http.HandlerFunc(p.serveInstanceDiscovery))
	r.Handle("/oauth2/v2.0/token", http.HandlerFunc(p.serveToken))
	r.Handle("/{tenant}/oauth2/v2.0/token", http.HandlerFunc(p.serveToken))
	r.Handle("/{tenant}/discovery/v2.0/keys", http.HandlerFunc(p.serveKeys))
	r.Handle("/{tenant}/v2.0/.well-known/openid-configuration", http.HandlerFunc(p.serveOpenIDConfiguration))
}

// Handler returns the identity provider alone, for tests and embedding.
func (p *Provider) Handler() http.Handler {
	r := mux.NewRouter()
	p.Register(r)
	return r
}

// BaseURL is the scheme and host a client reached the sandbox at, or the
// configured public URL. Issuer and endpoint URLs are built on it, so they
// match the authority a client such as MSAL was configured with.
func (p *Provider) BaseURL(r *http.Request) string {
	if p.cfg.PublicURL != "" {
		return p.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// IsBaseURL reports whether base is BaseURL(r), without building it: the
// API asks it of every authenticated request to reuse the issuers it
// accepted through the same base.
func (p *Provider) IsBaseURL(r *http.Request, base string) bool {
	if p.cfg.PublicURL != "" {
		return base == p.cfg.PublicURL
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	host, ok := strings.CutPrefix(base, scheme)
	return ok && host == r.Host
}

// HostNames is the set of host names this sandbox serves.
func (p *Provider) HostNames() HostNames { return p.names }

// AuthURL is the auth_url a partner configures for base.
func (p *Provider) AuthURL(base string) string { return base + "/" + p.cfg.Tenant }

// TokenURL is the token endpoint for base.
func (p *Provider) TokenURL(base string) string { return p.AuthURL(base) + "/oauth2/v2.0/token" }
