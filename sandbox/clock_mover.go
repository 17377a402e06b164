package sandbox

import (
	"context"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/clock"
)

// clockMover moves the sandbox's clocks for the admin API: in this process
// (localClocks), or in Redis for every replica (sharedClocks). clientID ""
// is the sandbox-wide clock.
type clockMover interface {
	advance(ctx context.Context, clientID string, d time.Duration) error
	set(ctx context.Context, clientID string, at time.Time) error
	// reset puts one clock back: the sandbox-wide one (to real time) or a
	// client's (back to the sandbox-wide one).
	reset(ctx context.Context, clientID string) error
	// resetAll puts every clock back to real time.
	resetAll(ctx context.Context) error
}

// localClocks is the in-process clockMover of a sandbox that runs alone.
type localClocks struct {
	global *clock.Adjustable
	per    *clock.PerClient
}

func (l localClocks) advance(_ context.Context, clientID string, d time.Duration) error {
	if clientID != "" {
		l.per.Advance(clientID, d)
	} else {
		l.global.Advance(d)
	}
	return nil
}

func (l localClocks) set(_ context.Context, clientID string, at time.Time) error {
	if clientID != "" {
		l.per.Set(clientID, at)
	} else {
		l.global.Set(at)
	}
	return nil
}

func (l localClocks) reset(_ context.Context, clientID string) error {
	if clientID != "" {
		l.per.Reset(clientID)
	} else {
		l.global.Reset()
	}
	return nil
}

func (l localClocks) resetAll(context.Context) error {
	l.global.Reset()
	l.per.ResetAll()
	return nil
}
