package rediscall_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// A read timeout as go-redis returns it (a net.Error whose Timeout is
// true), a refused connection (a net.Error that is not a timeout: Redis
// is down, not slow), and an error Redis answered.
var (
	errTimeout = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	errReply   = errors.New("ERR wrong number of arguments")
	errOOM     = replyErr("OOM command not allowed when used memory > 'maxmemory'. script: 1f2e, on @user_script:9.")
	errScript  = replyErr("ERR user_script:3: Script attempted to access nonexistent global variable 'x' script: 1f2e, on @user_script:3.")
)

// calls is a call that returns errs in turn, then nil; stall, when set,
// is run before the answer of call number stallAt (1-based).
type calls struct {
	errs    []error
	stallAt int
	stall   func()
	n       int
}

func (c *calls) call() error {
	c.n++
	if c.n == c.stallAt {
		c.stall()
	}
	if c.n <= len(c.errs) {
		return c.errs[c.n-1]
	}
	return nil
}

// pastDeadline waits until the clock has passed start+d, so a budget of d
// made after start has run out: the stall the budget is there to ride.
func pastDeadline(start time.Time, d time.Duration) func() {
	return func() {
		end := start.Add(d)
		for !time.Now().After(end) {
			<-time.After(time.Until(end) + time.Millisecond)
		}
	}
}

func timeouts(n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = errTimeout
	}
	return errs
}

// TestRide pins Budget.Ride: a call is sent again while it times out and
// the budget lasts; any other failure, a cancelled request, or a spent
// budget ends it with the call's own error.
func TestRide(t *testing.T) {
	const budget = 20 * time.Millisecond
	tests := []struct {
		name      string
		errs      []error
		stallAt   int  // the call that outlasts the budget; 0: none
		cancelled bool // the request's context is already cancelled
		wantCalls int
		wantErr   error
	}{
		{name: "answered at once", wantCalls: 1},
		{name: "timeouts then an answer", errs: timeouts(3), wantCalls: 4},
		{name: "a wrapped timeout is a timeout", errs: []error{fmt.Errorf("evalsha: %w", errTimeout)}, wantCalls: 2},
		{name: "a refused connection ends at once", errs: []error{errRefused, errTimeout}, wantCalls: 1, wantErr: errRefused},
		{name: "an error reply ends at once", errs: []error{errReply}, wantCalls: 1, wantErr: errReply},
		{name: "a stall that outlasts the budget", errs: timeouts(5), stallAt: 2, wantCalls: 2, wantErr: errTimeout},
		{name: "a cancelled request is not ridden", errs: timeouts(2), cancelled: true, wantCalls: 1, wantErr: errTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			start := time.Now()
			b := rediscall.NewBudget(budget)
			c := &calls{errs: tc.errs, stallAt: tc.stallAt, stall: pastDeadline(start, budget)}
			err := b.Ride(ctx, c.call)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Ride: %v, want %v", err, tc.wantErr)
			}
			if c.n != tc.wantCalls {
				t.Errorf("Ride sent the call %d times, want %d", c.n, tc.wantCalls)
			}
		})
	}
}

// TestResend pins Budget.Resend: a call is sent again after any error but
// a final refusal Redis answered (no other error proves it did not run)
// while the budget lasts, with a pause
// between two sends; a cancelled request, or a budget that cannot cover
// the pause, ends it with the call's own error.
func TestResend(t *testing.T) {
	tests := []struct {
		name      string
		budget    time.Duration
		errs      []error
		cancelled bool
		wantCalls int
		wantErr   error
	}{
		{name: "answered at once", budget: time.Minute, wantCalls: 1},
		{name: "any error but a refusal is resent", budget: time.Minute, errs: []error{errRefused, errTimeout, errReply, replyErr("READONLY You can't write against a read only replica.")}, wantCalls: 5},
		{name: "a refusal Redis answered is final", budget: time.Minute, errs: []error{errOOM, errTimeout}, wantCalls: 1, wantErr: errOOM},
		{name: "a script's error is final", budget: time.Minute, errs: []error{errScript}, wantCalls: 1, wantErr: errScript},
		{name: "a refusal after a send whose outcome is unknown is unconfirmed", budget: time.Minute, errs: []error{errTimeout, errOOM}, wantCalls: 2, wantErr: rediscall.ErrUnconfirmed},
		{name: "a budget shorter than the pause sends once", budget: time.Millisecond, errs: []error{errRefused}, wantCalls: 1, wantErr: errRefused},
		{name: "a cancelled request is not resent", budget: time.Minute, errs: []error{errRefused}, cancelled: true, wantCalls: 1, wantErr: errRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			c := &calls{errs: tc.errs}
			err := rediscall.NewBudget(tc.budget).Resend(ctx, c.call)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Resend: %v, want %v", err, tc.wantErr)
			}
			if errors.Is(tc.wantErr, errOOM) && errors.Is(err, rediscall.ErrUnconfirmed) {
				t.Errorf("Resend: %v, a first send refused is no unconfirmed write", err)
			}
			if c.n != tc.wantCalls {
				t.Errorf("Resend sent the call %d times, want %d", c.n, tc.wantCalls)
			}
		})
	}
}

// TestResendGivesUpWhenTheBudgetIsSpent: a call that always fails is sent
// until the next send would come after the budget, and Resend returns the
// last send's error: never before the budget (less one pause) is spent.
func TestResendGivesUpWhenTheBudgetIsSpent(t *testing.T) {
	const budget, pause = 250 * time.Millisecond, 100 * time.Millisecond // pause: resendPause
	start := time.Now()
	n := 0
	var last error
	err := rediscall.NewBudget(budget).Resend(t.Context(), func() error {
		n++
		last = fmt.Errorf("send %d: %w", n, errRefused)
		return last
	})
	if err != last {
		t.Errorf("Resend: %v, want the last send's error %v", err, last)
	}
	if spent := time.Since(start); spent < budget-pause {
		t.Errorf("Resend gave up after %v and %d sends, with more than a pause (%v) of its %v budget left", spent, n, pause, budget)
	}
}
