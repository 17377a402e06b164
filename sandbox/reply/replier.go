package reply

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redact"
	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/backend"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/journal"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/store"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// SharedRetryAfter is the Retry-After, in seconds, of an answer refused
// because the shared state (Redis) cannot be reached.
const SharedRetryAfter = 1

// Replier answers requests whose handling failed: it fills in what every
// problem carries, logs what the sandbox must know, and keeps credentials
// out of both.
type Replier struct {
	// Log receives the failures a partner's problem body does not explain.
	Log *slog.Logger
	// Redactor hides credentials in problem instances and log lines.
	Redactor *redact.Redactor
	// Clocks date the token endpoint's error bodies.
	Clocks *clock.PerClient
}

// Problem writes p for request r, filling in the instance and trace id.
// The instance is the path as the journal shows it: a token or secret sent
// as a path segment never comes back in an error body.
func (x *Replier) Problem(w http.ResponseWriter, r *http.Request, p Problem) {
	p = p.ForRequest(r, RequestID(r))
	p.Instance = x.Redactor.Path(p.Instance)
	Write(w, p)
}

// Fail answers err: the request's own problem, or a logged 500 whose body
// does not leak internals. A failure of the shared state answers 503.
func (x *Replier) Fail(w http.ResponseWriter, r *http.Request, err error) {
	if isUnavailable(err) {
		x.Log.Error("shared state unavailable", "request_id", RequestID(r), "err", err)
		if maybeStored(r, err) {
			x.unconfirmedWrite(w, r)
			return
		}
		x.Unavailable(w, r, err)
		return
	}
	p := For(err)
	// A quota refusal is the caller's, and a runaway loop meets one per
	// request: no log line each.
	if p.Status >= http.StatusInternalServerError && p.Status != http.StatusInsufficientStorage {
		x.Log.Error("request failed", "method", x.Redactor.Log(r.Method), "path", x.Redactor.LogPath(r.URL.Path), "request_id", RequestID(r), "err", err)
	}
	x.Problem(w, r, p)
}

// isUnavailable reports whether err is a part of the state failing to
// answer, rather than the request or the sandbox being wrong.
func isUnavailable(err error) bool {
	return errors.Is(err, backend.ErrUnavailable) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, idp.ErrClientStore) ||
		errors.Is(err, scenarios.ErrUnavailable) || errors.Is(err, journal.ErrUnavailable)
}

// Unavailable answers a request that needs Redis while Redis failed it
// with err: 503 with Retry-After, in Entra's shape (temporarily_unavailable)
// on the token endpoint, problem+json elsewhere. The problem says what
// happened: Redis refused the call (out of memory, say: an answer, given
// at once, in fixed words that quote nothing of Redis's reply), or it
// cannot be reached.
func (x *Replier) Unavailable(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(SharedRetryAfter))
	if EndpointOf(r) == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, x.Clocks.Now(""), idp.Unavailable())
		return
	}
	what := "cannot be reached"
	if reason, refused := rediscall.Refusal(err); refused {
		what = "refused this request's call: " + reason
	}
	x.Problem(w, r, New(http.StatusServiceUnavailable,
		"the sandbox's shared state (Redis) "+what+"; retry after "+strconv.Itoa(SharedRetryAfter)+" second(s)"))
}

// maybeStored reports whether err is that of an API write Redis may have
// made though the sandbox could not confirm it: its replicas did not
// confirm it in time (--redis-wait), its answer did not come in time, or
// its connection broke (its answer lost, go-redis's retries failing: a
// refused retry may follow a first send that ran). The Redis-backed stores
// say so (rediscall.ErrUnconfirmed). Such a 503 must not read as "nothing
// happened": a client that resends a trial referral blindly would refer
// the patient twice.
func maybeStored(r *http.Request, err error) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || EndpointOf(r) == scenarios.EndpointToken {
		return false
	}
	return errors.Is(err, rediscall.ErrUnconfirmed)
}

// unconfirmedWrite answers a write that may have been stored (see
// maybeStored): 503 with Retry-After, saying so and how to find out
// before sending it again (readBackAdvice).
func (x *Replier) unconfirmedWrite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(SharedRetryAfter))
	x.Problem(w, r, New(http.StatusServiceUnavailable,
		"the sandbox's shared state (Redis) did not confirm this write: it may have been stored; "+
			readBackAdvice(r)+"; retry after "+strconv.Itoa(SharedRetryAfter)+" second(s)"))
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

// Refuse answers 400 to a request the sandbox refuses before routing it (a
// bad X-Sandbox-* value, plain HTTP to --tls) in the shape of the endpoint
// it was for: Entra's error body on the token endpoint, whose clients parse
// nothing else (interface 7.1), problem+json everywhere else.
func (x *Replier) Refuse(w http.ResponseWriter, r *http.Request, detail string) {
	if EndpointOf(r) == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, x.Clocks.Now(""), idp.InvalidRequest(detail))
		return
	}
	x.Problem(w, r, New(http.StatusBadRequest, detail))
}
