package rediscall_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

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

// replyErr is an error Redis answered, as go-redis returns it (a
// redis.Error).
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (e replyErr) RedisError()   {}

// TestMarkUnconfirmed: a call whose answer timed out or was lost on a
// broken connection, or that is Unconfirmed, may have taken effect, and its
// error wraps ErrUnconfirmed (once) while keeping what it wraps. So does a
// refused connection: go-redis keeps only its last retry's error, which
// may follow a send whose reply was lost, and so do the answers go-redis
// retries (READONLY after a failover, say) and its pool timeout. An error
// Redis answered that go-redis does not retry, a cancelled call and a
// closed client come back as they are.
func TestMarkUnconfirmed(t *testing.T) {
	marked := rediscall.MarkUnconfirmed(errTimeout)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a timeout", errTimeout, true},
		{"a wrapped timeout", fmt.Errorf("evalsha: %w", errTimeout), true},
		{"the call's deadline", context.DeadlineExceeded, true},
		{"unconfirmed by replicas", unconfirmedErr(true), true},
		{"says it is confirmed", unconfirmedErr(false), false},
		{"the connection closed before the reply", io.EOF, true},
		{"the connection closed inside the reply", io.ErrUnexpectedEOF, true},
		{"the connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"a broken pipe", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, true},
		{"a refused connection (the last retry's error)", errRefused, true},
		{"an error reply", errReply, false},
		{"OOM", replyErr("OOM command not allowed when used memory > 'maxmemory'"), false},
		{"READONLY (retried: a failover's demoted master)", replyErr("READONLY You can't write against a read only replica."), true},
		{"LOADING (retried)", replyErr("LOADING Redis is loading the dataset in memory"), true},
		{"CLUSTERDOWN (retried)", replyErr("CLUSTERDOWN The cluster is down"), true},
		{"TRYAGAIN (retried)", replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"max clients (retried)", replyErr("ERR max number of clients reached"), true},
		{"a wrapped retried reply", fmt.Errorf("evalsha: %w", replyErr("READONLY You can't write against a read only replica.")), true},
		{"READONLY as plain text, not a reply", errors.New("READONLY You can't write against a read only replica."), false},
		{"NOSCRIPT", replyErr("NOSCRIPT No matching script."), false},
		{"a closed client", redis.ErrClosed, false},
		{"a cancelled call", context.Canceled, false},
		{"a cancelled dial", &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("operation was canceled: %w", context.Canceled)}, false},
		// go-redis does not export its pool timeout: it is this plain
		// error. It can end a retry of a send whose reply was lost.
		{"no connection from the pool in time", errors.New("redis: connection pool timeout"), true},
		{"a wrapped pool timeout", fmt.Errorf("evalsha: %w", errors.New("redis: connection pool timeout")), true},
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
