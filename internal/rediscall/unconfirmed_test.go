package rediscall_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
)

// unconfirmedErr is an error that says whether its write is unconfirmed,
// as the sandbox's --redis-wait errors do.
type unconfirmedErr bool

func (e unconfirmedErr) Error() string     { return fmt.Sprintf("unconfirmed %v", bool(e)) }
func (e unconfirmedErr) Unconfirmed() bool { return bool(e) }

func TestUnconfirmed(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"a plain error", errors.New("boom"), false},
		{"a timeout", errTimeout, false},
		{"a refused connection", errRefused, false},
		{"an error reply", errReply, false},
		{"unconfirmed", unconfirmedErr(true), true},
		{"unconfirmed, wrapped", fmt.Errorf("evalsha: %w", unconfirmedErr(true)), true},
		{"unconfirmed, joined", errors.Join(errTimeout, unconfirmedErr(true)), true},
		{"says it is confirmed", unconfirmedErr(false), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rediscall.Unconfirmed(tc.err); got != tc.want {
				t.Errorf("Unconfirmed(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestMarkUnconfirmed: a call whose answer timed out, or that is
// Unconfirmed, may have taken effect, and its error wraps ErrUnconfirmed
// (once) while keeping what it wraps; any other error comes back as it
// is.
func TestMarkUnconfirmed(t *testing.T) {
	marked := rediscall.MarkUnconfirmed(errTimeout)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a timeout", errTimeout, true},
		{"a wrapped timeout", fmt.Errorf("evalsha: %w", errTimeout), true},
		{"unconfirmed by replicas", unconfirmedErr(true), true},
		{"says it is confirmed", unconfirmedErr(false), false},
		{"a refused connection", errRefused, false},
		{"an error reply", errReply, false},
		{"already marked", marked, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rediscall.MarkUnconfirmed(tc.err)
			if is := errors.Is(got, rediscall.ErrUnconfirmed); is != tc.want {
				t.Errorf("MarkUnconfirmed(%v) = %v: wraps ErrUnconfirmed %v, want %v", tc.err, got, is, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("MarkUnconfirmed(%v) = %v: lost the error it marks", tc.err, got)
			}
			if !tc.want && got != tc.err {
				t.Errorf("MarkUnconfirmed(%v) = %v: want it unchanged", tc.err, got)
			}
		})
	}
	if got := rediscall.MarkUnconfirmed(marked); got != marked {
		t.Errorf("marking twice: %v, want %v unchanged", got, marked)
	}
	if got := rediscall.MarkUnconfirmed(nil); got != nil {
		t.Errorf("MarkUnconfirmed(nil) = %v", got)
	}
}
