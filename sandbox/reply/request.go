package reply

import (
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// RequestIDKey is the context key the chain's first layer answers with
// the request's id, as a *string: a pointer into the request's state, so
// reading it allocates nothing.
type RequestIDKey struct{}

// RequestID returns the id the chain gave r, or "" outside the chain.
func RequestID(r *http.Request) string {
	if id, _ := r.Context().Value(RequestIDKey{}).(*string); id != nil {
		return *id
	}
	return ""
}

// EndpointOf classifies a request for failure rules, the journal and the
// shape of its errors: the token endpoint, the API, the ping, or "" for
// what the sandbox adds (health, discovery, admin), which rules never
// touch.
func EndpointOf(r *http.Request) scenarios.Endpoint {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/oauth2/v2.0/token"):
		return scenarios.EndpointToken
	case p == "/health/ping":
		return scenarios.EndpointPing
	case strings.HasPrefix(p, "/api/v1/") && p != "/api/v1/openapi.json":
		return scenarios.EndpointAPI
	}
	return ""
}
