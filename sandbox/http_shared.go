package sandbox

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// sharedRetryAfter is the Retry-After, in seconds, of an answer refused
// because Redis cannot be reached.
const sharedRetryAfter = 1

// withShared brings the replica in step with the others before serving a
// request, and answers 503 with Retry-After when Redis cannot be reached:
// serving from this replica's own copy would silently disagree with the
// others. The health check answers for itself (serveHealth), and the
// documents no shared state changes are served whatever Redis does.
func (s *Server) withShared(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !needsSharedState(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := s.backend.Sync(r.Context())
		if err != nil {
			s.log.Error("shared state unavailable", "request_id", requestID(r), "err", err)
			s.unavailable(w, r, err)
			return
		}
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
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

// unavailable answers a request that needs Redis while Redis failed it
// with err: 503 with Retry-After, in Entra's shape (temporarily_unavailable)
// on the token endpoint, problem+json elsewhere. The problem says what
// happened: Redis refused the call (out of memory, say: an answer, given
// at once, in fixed words that quote nothing of Redis's reply), or it
// cannot be reached.
func (s *Server) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(sharedRetryAfter))
	if endpointOf(r) == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, s.clocks.Now(""), idp.Unavailable())
		return
	}
	what := "cannot be reached"
	if reason, refused := rediscall.Refusal(err); refused {
		what = "refused this request's call: " + reason
	}
	s.problem(w, r, newProblem(http.StatusServiceUnavailable,
		"the sandbox's shared state (Redis) "+what+"; retry after "+strconv.Itoa(sharedRetryAfter)+" second(s)"))
}

// maybeStored reports whether err is that of an API write Redis may have
// made though the sandbox could not confirm it: its replicas did not
// confirm it in time (--redis-wait), its answer did not come in time, or
// its connection broke (its answer lost, go-redis's retries failing: a
// refused retry may follow a first send that ran). The Redis-backed stores
// say so (rediscall.ErrUnconfirmed). Such a 503
// must not read as "nothing happened": a client that resends a trial
// referral blindly would refer the patient twice.
func maybeStored(r *http.Request, err error) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || endpointOf(r) == scenarios.EndpointToken {
		return false
	}
	return errors.Is(err, rediscall.ErrUnconfirmed)
}

// unconfirmedWrite answers a write that may have been stored (see
// maybeStored): 503 with Retry-After, saying so and how to find out
// before sending it again (readBackAdvice).
func (s *Server) unconfirmedWrite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(sharedRetryAfter))
	s.problem(w, r, newProblem(http.StatusServiceUnavailable,
		"the sandbox's shared state (Redis) did not confirm this write: it may have been stored; "+
			readBackAdvice(r)+"; retry after "+strconv.Itoa(sharedRetryAfter)+" second(s)"))
}

// readBackAdvice says how the caller of an unconfirmed write finds out
// whether it was stored. Each kind of write has its own way: a qualified
// referral carries the caller's own id, a trial referral does not, and an
// admin change is read back where it was made.
func readBackAdvice(r *http.Request) string {
	switch r.URL.Path {
	case "/api/v1/referrals/qualified":
		return "read it back by GET /api/v1/referrals/qualified/{externalSourceId} (200: it was stored; 404: it was not), " +
			"or resend it with the same externalSourceId: a 409 means it was stored"
	case "/api/v1/referrals", "/api/v1/referrals/":
		return "a trial referral has no id of your choosing, so list your referrals (GET /api/v1/referrals/, newest first) " +
			"and look for the patient before you send it again: a blind resend refers the patient twice"
	}
	return "read back what it changes before you send it again (the admin API's GET of what it changed: " +
		"/__sandbox/clock, /__sandbox/scenarios, /__sandbox/clients and so on)"
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
		w.Header().Set("Retry-After", strconv.Itoa(sharedRetryAfter))
		writeJSON(w, http.StatusServiceUnavailable, healthDegraded{Status: "degraded", Reason: "redis unreachable: the shared state of this replica cannot be read"})
		return true
	}
	return false
}
