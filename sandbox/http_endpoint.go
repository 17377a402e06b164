package sandbox

import (
	"net/http"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// endpointOf classifies a request for failure rules and the journal: the
// token endpoint, the API, the ping, or "" for what the sandbox adds
// (health, discovery, admin), which rules never touch.
func endpointOf(r *http.Request) scenarios.Endpoint {
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

// journaled reports whether requests to this path enter the request journal:
// everything but the sandbox's own admin API, console and health check.
func journaled(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/__sandbox/")
}
