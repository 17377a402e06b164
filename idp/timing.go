package idp

import (
	"sync"
	"time"
)

// The sandbox issues and checks tokens on one clock, so by default there is
// no leeway: a token is expired the second its exp passes, as the interface
// says (an expired token gets 401). Config.ClockSkew (--clock-skew) adds one
// for those who want it.
//
// Moving the clock back (POST /__sandbox/clock {"reset": true} after an
// advance) leaves clients holding tokens whose nbf is in the new clock's
// future, and token libraries keep serving them from their cache by their
// own expiry. The rule: a token the sandbox itself issued stays valid until
// its exp passes on the current clock, even when its nbf is in the future.
// "Issued by the sandbox" is the signature plus an nbf no later than the
// latest nbf the provider has issued since it started (issuedUpTo); any
// other future nbf is refused as not yet valid, with a detail saying the
// sandbox clock may have been moved back and a new token is needed.

// issuedHighWater remembers the latest nbf the provider has signed.
type issuedHighWater struct {
	mu     sync.Mutex
	latest time.Time
}

// record notes that a token with this nbf was issued.
func (h *issuedHighWater) record(nbf time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if nbf.After(h.latest) {
		h.latest = nbf
	}
}

// get returns the latest nbf issued (zero before the first token).
func (h *issuedHighWater) get() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest
}

// timing is what the time checks of one validation need.
type timing struct {
	now        time.Time
	skew       time.Duration
	issuedUpTo time.Time
}

// timing reads the client's clock and the high-water mark once per
// validation.
func (p *Provider) timing(clientID string) timing {
	return timing{now: p.now(clientID), skew: p.cfg.ClockSkew, issuedUpTo: p.issued.get()}
}

// check refuses a token past exp (plus skew) or before an nbf the sandbox
// never issued.
func (t timing) check(exp, nbf time.Time) *ValidationError {
	if t.now.After(exp.Add(t.skew)) {
		return refuse(ReasonExpired, "expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf.IsZero() || !t.now.Add(t.skew).Before(nbf) {
		return nil
	}
	if !nbf.After(t.issuedUpTo) {
		return nil // issued by the sandbox before its clock was moved back
	}
	return refuse(ReasonNotYetValid, "not valid before %s, and the sandbox clock says %s: if the sandbox clock was moved back, fetch a new token",
		nbf.UTC().Format(time.RFC3339), t.now.UTC().Format(time.RFC3339))
}
