// Package recording is the recording proxy (serve --upstream): it sends
// partner calls to the real service, and keeps of each exchange only what
// a privacy officer can approve: credentials redacted, every other value
// replaced by a placeholder of its form, and the answer checked against
// the served OpenAPI document, each divergence phrased without quoting a
// value. It also bounds what anonymous callers can make it hold: the
// bodies in flight, and the work of listing divergences.
//
// The sandbox's HTTP layer decides which requests it forwards and writes
// the answers (sandbox/http_upstream.go); this package holds everything the
// forwarding and the recording need.
//
// This package is not a stable API: it changes with the sandbox's
// internals. The Go API to build on is package sandboxtest.
package recording

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/placeholder"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/contractdoc"
)

// Config makes the sandbox a recording proxy (serve --upstream):
// partner calls to the token endpoint, the API and ping go to the real
// service, and its answers come back, journaled with patient data
// replaced and checked against the OpenAPI document. Failure rules still
// apply first, so a rule can answer 503 in front of the real service.
type Config struct {
	// RootURL is the real service's {root_url}; the API is RootURL/api/v1.
	RootURL string
	// AuthURL is its {auth_url}; token requests go to AuthURL/oauth2/v2.0/token.
	AuthURL string
	// Transport sends the forwarded requests (default http.DefaultTransport).
	Transport http.RoundTripper
	// Keep names the JSON members and headers whose values the journal
	// keeps as the real service sent them (serve --upstream-keep); every
	// other value is replaced by a placeholder of its form.
	Keep []string
}

// MaxForwardedBytes bounds a forwarded request or answer body.
const MaxForwardedBytes = 4 << 20

// timeout bounds one forwarded request.
const timeout = 30 * time.Second

// Proxy forwards partner calls to the real service and makes the journal's
// view of each exchange.
type Proxy struct {
	root, auth   string
	client       *http.Client
	validator    *documentValidator
	placeholders *placeholder.Maker
	bodies       *bodyBudget
	// redactor is the sandbox's (the identity provider's): what it hides
	// in the journal and the logs, the proxy hides in recordings.
	redactor *redact.Redactor
	// log takes one line per diverging answer.
	log *slog.Logger
}

// New makes the proxy cfg describes, whose placeholders keep the words of
// contract's document (the built-in one when contract is nil). It returns
// nil when cfg is nil: the sandbox then answers every call itself.
func New(cfg *Config, contract *contractdoc.Contract, redactor *redact.Redactor, log *slog.Logger) (*Proxy, error) {
	if cfg == nil {
		return nil, nil
	}
	for _, u := range []string{cfg.RootURL, cfg.AuthURL} {
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return nil, fmt.Errorf("sandbox: upstream %q is not an absolute http or https URL", u)
		}
	}
	validator, err := newDocumentValidator()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	placeholders, err := newPlaceholders(contract, cfg.Keep)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	return &Proxy{
		root: strings.TrimRight(cfg.RootURL, "/"), auth: strings.TrimRight(cfg.AuthURL, "/"),
		client: &http.Client{Transport: transport, Timeout: timeout,
			// The partner sees the real service's redirect, not where it leads.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		validator: validator, placeholders: placeholders,
		bodies:   newBodyBudget(MaxBodiesInFlight),
		redactor: redactor, log: log,
	}, nil
}

// Target is where a partner call goes on the real service; "" for a
// request the sandbox answers itself (its admin API, discovery, keys).
func (p *Proxy) Target(r *http.Request, endpoint string) string {
	switch endpoint {
	case "token":
		return p.auth + "/oauth2/v2.0/token"
	case "api", "ping":
		u := p.root + r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			u += "?" + r.URL.RawQuery
		}
		return u
	}
	return ""
}

// Do sends a forwarded request to the real service. It does not follow
// redirects, and gives up after a bound.
func (p *Proxy) Do(out *http.Request) (*http.Response, error) { return p.client.Do(out) }
