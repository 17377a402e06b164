package rediscall

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Budget is how long one request may ride out a Redis stall, counted from
// its first call.
type Budget struct {
	deadline time.Time
}

// NewBudget starts a request's budget of d.
func NewBudget(d time.Duration) Budget { return Budget{deadline: time.Now().Add(d)} }

// Ride runs call, and again while it times out and the budget lasts. Other
// failures (a refused connection: Redis is down, not slow) end at once.
// It suits reads, which change nothing.
func (b Budget) Ride(ctx context.Context, call func() error) error {
	for {
		err := call()
		var timeout net.Error
		if !errors.As(err, &timeout) || !timeout.Timeout() || ctx.Err() != nil || time.Now().After(b.deadline) {
			return err
		}
	}
}

// resendPause is how long Resend waits between two sends of a call, so
// that a refused connection (a node dead until its replica takes over) is
// not hammered.
const resendPause = 100 * time.Millisecond

// Resend runs a call that takes effect once per call id, and sends it again
// after an error while the budget lasts. No error but a refusal proves
// the call did not run: go-redis's own retries may end on a refused
// connection after its first send ran on a node that then died, as a
// master killed in a failover. Sent again under its id, the call gets back
// the answer made, or makes the only one, so something spent always
// reaches its request.
//
// A final refusal Redis answered (Refusal: out of memory, say) ends the
// call at once, as the same answer would come again until the budget was
// spent: the request fails promptly instead of holding its connection.
// When an earlier send failed otherwise, its outcome stays unknown (it
// may still run once Redis resumes), so the refusal is returned wrapped
// with ErrUnconfirmed.
func (b Budget) Resend(ctx context.Context, call func() error) error {
	unknown := false
	for {
		err := call()
		if err == nil {
			return nil
		}
		if Refused(err) {
			if unknown {
				return fmt.Errorf("%w: an earlier send may still run: %w", ErrUnconfirmed, err)
			}
			return err
		}
		unknown = true
		if ctx.Err() != nil || time.Now().Add(resendPause).After(b.deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(resendPause):
		}
	}
}
