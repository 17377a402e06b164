package clock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store moves the sandbox's clocks for the admin API: in this process
// (Memory), or in Redis for every replica (Redis). clientID "" is the
// sandbox-wide clock. Every method takes a context and reports the
// backend's failure; a move that returns nil has been taken, and the
// PerClient the store was made with shows it. Both pass one conformance
// suite (clocktest).
type Store interface {
	// Advance moves a clock by d (back when d is negative).
	Advance(ctx context.Context, clientID string, d time.Duration) error
	// Set puts a clock at t.
	Set(ctx context.Context, clientID string, t time.Time) error
	// Reset puts one clock back: the sandbox-wide one to real time, a
	// client's back on the sandbox-wide one.
	Reset(ctx context.Context, clientID string) error
	// ResetAll puts every clock back to real time.
	ResetAll(ctx context.Context) error
}

// The range a clock may be moved within. A token carries its times as
// NumericDates, which the sandbox reads from 1970 to 9999; a clock is kept
// as an offset from real time in nanoseconds, which holds about ±292 years.
// From 1970 to 2200 satisfies both, with room for the two offsets a
// client's clock adds up (sandbox-wide and its own) and a day-long token.
var (
	Earliest = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	Latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ErrOutOfRange: a move would put a clock before Earliest or after Latest.
var ErrOutOfRange = errors.New("the clock would leave its range")

// span is the longest move that can stay in range.
var span = Latest.Sub(Earliest)

// inRange refuses t outside [Earliest, Latest], naming whose clock.
func inRange(who string, t time.Time) error {
	if t.Before(Earliest) || t.After(Latest) {
		return fmt.Errorf("%w: %s would be at %s, outside %s to %s", ErrOutOfRange, who, t.Format(time.RFC3339),
			Earliest.Format(time.RFC3339), Latest.Format(time.RFC3339))
	}
	return nil
}

// CheckAdvance refuses an advance by d that would put the clock of
// clientID, or with clientID "" any client's clock, out of range. Both
// stores call it first, on the clocks as this replica last read them.
func (p *PerClient) CheckAdvance(clientID string, d time.Duration) error {
	if d > span || d < -span {
		return fmt.Errorf("%w: %s is longer than the whole range, %s to %s", ErrOutOfRange, d,
			Earliest.Format(time.RFC3339), Latest.Format(time.RFC3339))
	}
	return p.checkMoved(clientID, func(now time.Time) time.Time { return now.Add(d) })
}

// CheckSet refuses a Set to t that would put a clock out of range.
func (p *PerClient) CheckSet(clientID string, t time.Time) error {
	if err := inRange("the clock", t); err != nil {
		return err
	}
	return p.checkMoved(clientID, func(time.Time) time.Time { return t })
}

// checkMoved checks the clock of clientID moved to to(now); a move of the
// sandbox-wide clock moves every client's clock with its own offset.
func (p *PerClient) checkMoved(clientID string, to func(now time.Time) time.Time) error {
	if clientID != "" {
		return inRange("the clock of "+clientID, to(p.Now(clientID)))
	}
	global := to(p.global.Now())
	if err := inRange("the sandbox clock", global); err != nil {
		return err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for id, own := range p.offsets {
		if err := inRange("the clock of "+id+" (which has its own offset)", global.Add(own)); err != nil {
			return err
		}
	}
	return nil
}

// Memory is the Store of a sandbox that runs alone: it moves a PerClient.
type Memory struct {
	clocks *PerClient
}

// NewMemory returns the Store that moves clocks.
func NewMemory(clocks *PerClient) *Memory { return &Memory{clocks: clocks} }

// Advance moves a clock by d.
func (m *Memory) Advance(_ context.Context, clientID string, d time.Duration) error {
	if err := m.clocks.CheckAdvance(clientID, d); err != nil {
		return err
	}
	if clientID != "" {
		m.clocks.Advance(clientID, d)
	} else {
		m.clocks.global.Advance(d)
	}
	return nil
}

// Set puts a clock at t.
func (m *Memory) Set(_ context.Context, clientID string, t time.Time) error {
	if err := m.clocks.CheckSet(clientID, t); err != nil {
		return err
	}
	if clientID != "" {
		m.clocks.Set(clientID, t)
	} else {
		m.clocks.global.Set(t)
	}
	return nil
}

// Reset puts one clock back.
func (m *Memory) Reset(_ context.Context, clientID string) error {
	if clientID != "" {
		m.clocks.Reset(clientID)
	} else {
		m.clocks.global.Reset()
	}
	return nil
}

// ResetAll puts every clock back to real time.
func (m *Memory) ResetAll(context.Context) error {
	m.clocks.global.Reset()
	m.clocks.ResetAll()
	return nil
}
