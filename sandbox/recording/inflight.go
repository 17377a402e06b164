package recording

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// MaxBodiesInFlight bounds the bytes of request and answer bodies the
// recording proxy holds at once, over all callers. The proxy forwards
// before any check of the caller (checking is the real service's job), so
// without it a few dozen anonymous 4 MiB bodies at once would hold
// hundreds of megabytes. It is 16 bodies of MaxForwardedBytes: far above
// what partners' ordinary calls, a few kilobytes each, ever hold.
const MaxBodiesInFlight = 16 * MaxForwardedBytes

// smallBody is the largest body the budget does not count: partners'
// ordinary calls, which must go through even while large bodies fill the
// budget. What they hold is bounded by the connections that carry them.
const smallBody = 64 << 10

// bodyBudget counts the body bytes forwarded requests hold. A request
// whose body does not fit is refused before anything is sent upstream (so
// a refusal never hides a write the real service made); an answer waits
// for room instead, since its request has reached the real service. A
// request gives its room back once sent, before its answer asks for any,
// so requests waiting for answers can never hold all the room between
// them.
type bodyBudget struct {
	sem *semaphore.Weighted
}

func newBodyBudget(limit int64) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(limit)}
}

// Hold is what one forwarded request holds of the budget, from its
// reservation until Release.
type Hold struct {
	b    *bodyBudget
	held int64
}

// ReserveRequest takes room, before anything is sent upstream, for a
// request body of declared length (-1 when unknown), or reports false when
// the bodies in flight already hold MaxBodiesInFlight: the caller then
// refuses the request rather than wait, since no write reached the real
// service yet.
func (p *Proxy) ReserveRequest(declared int64) (*Hold, bool) {
	return p.bodies.reserveRequest(declared)
}

// reserveRequest takes room for a request body of declared length (-1 when
// unknown, taken as the largest forwarded), or reports false when the
// budget is spent.
func (b *bodyBudget) reserveRequest(declared int64) (*Hold, bool) {
	n := int64(MaxForwardedBytes)
	if declared >= 0 && declared < n {
		n = declared
	}
	if n <= smallBody {
		return &Hold{b: b}, true
	}
	if !b.sem.TryAcquire(n) {
		return nil, false
	}
	return &Hold{b: b, held: n}, true
}

// ShrinkTo gives back what the body read did not use.
func (h *Hold) ShrinkTo(used int64) {
	if used <= smallBody {
		used = 0
	}
	if used < h.held {
		h.b.sem.Release(h.held - used)
		h.held = used
	}
}

// ReserveAnswer waits for room for an answer body of declared length (-1
// when unknown), or for ctx to end.
func (h *Hold) ReserveAnswer(ctx context.Context, declared int64) error {
	n := int64(MaxForwardedBytes + 1)
	if declared >= 0 && declared < n {
		n = declared
	}
	if n <= smallBody {
		return nil
	}
	if err := h.b.sem.Acquire(ctx, n); err != nil {
		return err
	}
	h.held += n
	return nil
}

// Release gives everything held back; it may be called again.
func (h *Hold) Release() {
	if h.held > 0 {
		h.b.sem.Release(h.held)
		h.held = 0
	}
}
