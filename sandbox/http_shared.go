package sandbox

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
)

// withShared brings the replica in step with the others before serving a
// request, and answers 503 with Retry-After when Redis cannot be reached:
// serving from this replica's own copy would silently disagree with the
// others. The health check answers for itself (serveHealth), and the
// documents no shared state changes are served whatever Redis does.
func (s *Server) withShared(next layer) layer {
	return func(w http.ResponseWriter, r *http.Request) exchange.Outcome {
		if !needsSharedState(r.URL.Path) {
			return next(w, r)
		}
		ctx, err := s.backend.Sync(r.Context())
		if err != nil {
			s.log.Error("shared state unavailable", "request_id", reply.RequestID(r), "err", err)
			s.reply.Unavailable(w, r, err)
			return exchange.Outcome{}
		}
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		return next(w, r)
	}
}

// needsSharedState reports whether a request to path depends on the state
// replicas share. The health check and the static documents (signing keys,
// discovery, the OpenAPI documents, the CA certificate and the console's
// files) do not: a client can still fetch the JWKS while Redis is away.
func needsSharedState(path string) bool {
	switch {
	case path == "/__sandbox/health", path == "/__sandbox/ca.pem", path == MetricsPath, path == "/__sandbox/openapi.json",
		path == "/api/v1/openapi.json", path == "/common/discovery/instance",
		path == "/__sandbox/ui", strings.HasPrefix(path, "/__sandbox/ui/"),
		strings.HasSuffix(path, "/discovery/v2.0/keys"), strings.HasSuffix(path, "/v2.0/.well-known/openid-configuration"):
		return false
	}
	return true
}

// healthDegraded is the health check's body when shared state is missing.
type healthDegraded struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// degraded answers the health check 503 {"status":"degraded"} with
// Retry-After when the shared state (Redis) cannot be reached, so a load
// balancer stops sending requests this replica would refuse. The reason
// names Redis, never its URL (it may hold a password).
func (s *Server) degraded(w http.ResponseWriter, r *http.Request) bool {
	if err := s.backend.Ping(r.Context()); err != nil {
		s.log.Warn("health check: redis unreachable", "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(reply.SharedRetryAfter))
		reply.JSON(w, http.StatusServiceUnavailable, healthDegraded{Status: "degraded", Reason: "redis unreachable: the shared state of this replica cannot be read"})
		return true
	}
	return false
}
