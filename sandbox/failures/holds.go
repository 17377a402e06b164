package failures

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/referrals-sandbox/referrals-sandbox/idp"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/exchange"
	"github.com/referrals-sandbox/referrals-sandbox/sandbox/reply"
	"github.com/referrals-sandbox/referrals-sandbox/scenarios"
)

// Caps on the connections that delays and hangs hold open, per replica:
// every held request keeps a connection, a file descriptor and a goroutine
// for up to scenarios.MaxDelay (a delay) or until the client gives up (a
// hang). Real tests hold a few at once: a timeout test one, a slow-network
// load test at 100 requests a second about 30.
const (
	// DefaultMaxHeld is how many requests all clients together may have
	// held at once, well under the usual 1,024 open files, so partners'
	// ordinary calls always find a descriptor.
	DefaultMaxHeld = 256
	// DefaultMaxHeldPerClient is how many one client may have held at once,
	// so one job cannot take the whole DefaultMaxHeld.
	DefaultMaxHeldPerClient = 32
	// HeldRetryAfter is the Retry-After of a refused hold, in seconds.
	HeldRetryAfter = 1
)

// holds counts the requests held by a delay or a hang, per verified client
// and in total. Its map holds only clients holding a request now, so it is
// bounded by the client list. Safe for concurrent use.
type holds struct {
	maxTotal, maxPerClient int

	mu        sync.Mutex
	total     int
	perClient map[string]int
}

func newHolds(maxTotal, maxPerClient int) *holds {
	if maxTotal <= 0 {
		maxTotal = DefaultMaxHeld
	}
	if maxPerClient <= 0 {
		maxPerClient = DefaultMaxHeldPerClient
	}
	return &holds{maxTotal: maxTotal, maxPerClient: maxPerClient, perClient: make(map[string]int)}
}

// acquire counts one more request of clientID held. It returns the release
// to call when the request is no longer held, or why it may not be held.
func (h *holds) acquire(clientID string) (release func(), refused string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.perClient[clientID] >= h.maxPerClient:
		return nil, fmt.Sprintf("client %s already has %d requests held by delays or hangs, its limit; retry after %d second(s)", clientID, h.maxPerClient, HeldRetryAfter)
	case h.total >= h.maxTotal:
		return nil, fmt.Sprintf("the sandbox already holds %d requests for delays and hangs, its limit; retry after %d second(s)", h.maxTotal, HeldRetryAfter)
	}
	h.total++
	h.perClient[clientID]++
	var once sync.Once
	return func() { once.Do(func() { h.release(clientID) }) }, ""
}

func (h *holds) release(clientID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total--
	if h.perClient[clientID]--; h.perClient[clientID] <= 0 {
		delete(h.perClient, clientID)
	}
}

// held reports how many requests are held now.
func (h *holds) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// holdsConnection reports whether d keeps the request's connection open:
// a delay or a hang.
func holdsConnection(d scenarios.Decision) bool {
	return d.Delay > 0 || d.Fault == scenarios.FaultHang
}

// withoutHold is d for a caller the sandbox has not verified, who may not
// hold a connection: the delay and a hang are dropped, the rest applies, so
// the request gets its answer (for such a caller, a refusal) at once.
func withoutHold(d scenarios.Decision) scenarios.Decision {
	d.Delay = 0
	if d.Fault == scenarios.FaultHang {
		d.Fault = scenarios.FaultNone
	}
	return d
}

// RefuseHold answers a request that would be held beyond a cap (a delay's,
// a hang's, or the recording proxy's bodies in flight): 503 with
// Retry-After, in the endpoint's own shape (Entra's temporarily_unavailable
// on the token endpoint, problem+json elsewhere).
func (l *Layer) RefuseHold(w http.ResponseWriter, r *http.Request, c exchange.Caller, why string) {
	w.Header().Set("Retry-After", strconv.Itoa(HeldRetryAfter))
	if c.Endpoint == scenarios.EndpointToken {
		idp.WriteTokenError(w, r, l.cfg.Clocks.Now(""), idp.Unavailable())
		return
	}
	id := c.ClientID()
	l.cfg.RateLimits.ForcedHeaders(r.Context(), w, id, l.cfg.Clocks.Now(id), 0)
	l.cfg.Reply.Problem(w, r, reply.New(http.StatusServiceUnavailable, why))
}
