// Package clock is the sandbox's one source of time. Token lifetimes,
// validation, timestamps and rate-limiting windows all read the same clock,
// so QA can move sandbox time forward (to expire a token without waiting an
// hour) and every part of the sandbox agrees on what time it is.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// Func adapts an ordinary function to the Clock interface.
type Func func() time.Time

// Now calls f.
func (f Func) Now() time.Time { return f() }

// Adjustable is real time shifted by an offset that can be changed while the
// sandbox runs. Time keeps flowing after an Advance or a Set; Reset returns to
// real time. It is safe for concurrent use.
type Adjustable struct {
	real func() time.Time

	mu     sync.RWMutex
	offset time.Duration
}

// NewAdjustable returns an Adjustable over real, or over time.Now when real
// is nil. Tests pass a fixed or stepping function for determinism.
func NewAdjustable(real func() time.Time) *Adjustable {
	if real == nil {
		real = time.Now
	}
	return &Adjustable{real: real}
}

// Now returns real time plus the current offset, in UTC.
func (c *Adjustable) Now() time.Time {
	c.mu.RLock()
	offset := c.offset
	c.mu.RUnlock()
	return c.real().Add(offset).UTC()
}

// Advance moves sandbox time forward by d (backward when d is negative).
func (c *Adjustable) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// Set makes the sandbox's current time t; time flows on from there.
func (c *Adjustable) Set(t time.Time) {
	c.mu.Lock()
	c.offset = t.Sub(c.real())
	c.mu.Unlock()
}

// Reset returns the clock to real time.
func (c *Adjustable) Reset() {
	c.mu.Lock()
	c.offset = 0
	c.mu.Unlock()
}

// Offset reports how far sandbox time is from real time.
func (c *Adjustable) Offset() time.Duration {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.offset
}
