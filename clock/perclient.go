package clock

import (
	"sync"
	"time"
)

// PerClient lets one client's time move apart from everyone else's: many CI
// jobs share one sandbox, and one job expiring its tokens must not expire
// every other job's. A client's time is the global time (an Adjustable)
// plus the client's own offset; a client without one follows the global
// clock. It is safe for concurrent use.
type PerClient struct {
	global *Adjustable

	mu      sync.RWMutex
	offsets map[string]time.Duration
	version int64 // of the last State applied (see Apply)
}

// NewPerClient returns client clocks over global.
func NewPerClient(global *Adjustable) *PerClient {
	return &PerClient{global: global, offsets: make(map[string]time.Duration)}
}

// Global is the sandbox-wide clock.
func (p *PerClient) Global() *Adjustable { return p.global }

// For returns the clock of clientID: the global one moved by the client's
// offset, read at each call, so a later move applies at once.
func (p *PerClient) For(clientID string) Clock {
	return Func(func() time.Time { return p.Now(clientID) })
}

// Now is the time of clientID ("" is the global time).
func (p *PerClient) Now(clientID string) time.Time {
	now := p.global.Now()
	if clientID == "" {
		return now
	}
	p.mu.RLock()
	offset := p.offsets[clientID]
	p.mu.RUnlock()
	return now.Add(offset)
}

// Offset is the client's own offset from the global clock and whether it
// has one.
func (p *PerClient) Offset(clientID string) (time.Duration, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	d, ok := p.offsets[clientID]
	return d, ok
}

// Advance moves clientID's time by d (negative moves it back).
func (p *PerClient) Advance(clientID string, d time.Duration) {
	p.mu.Lock()
	p.offsets[clientID] += d
	p.mu.Unlock()
}

// Set puts clientID's time at t.
func (p *PerClient) Set(clientID string, t time.Time) {
	p.mu.Lock()
	p.offsets[clientID] = t.Sub(p.global.Now())
	p.mu.Unlock()
}

// Reset puts clientID back on the global clock.
func (p *PerClient) Reset(clientID string) {
	p.mu.Lock()
	delete(p.offsets, clientID)
	p.mu.Unlock()
}

// ResetAll puts every client back on the global clock (the global clock
// itself is reset apart).
func (p *PerClient) ResetAll() {
	p.mu.Lock()
	clear(p.offsets)
	p.mu.Unlock()
}
