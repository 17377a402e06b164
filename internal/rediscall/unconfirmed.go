package rediscall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
)

// ErrUnconfirmed marks the error of a Redis call whose outcome is unknown:
// its answer did not come (in time, or at all: the connection broke), or
// its replicas did not acknowledge it in time (--redis-wait). A write that
// failed so may have been applied, and its caller must not report it as
// not done: a client that resends a trial referral blindly would refer the
// patient twice. Each Redis-backed store wraps it (MarkUnconfirmed), so
// that the sandbox's HTTP layer tells such a failure apart with errors.Is,
// knowing nothing of Redis's errors.
var ErrUnconfirmed = errors.New("redis did not confirm the call: it may have taken effect")

// MarkUnconfirmed returns err, the error of a Redis call, wrapped with
// ErrUnconfirmed when the call may have taken effect unseen:
//
//   - an Unconfirmed error (--redis-wait);
//   - a timeout (a net.Error whose Timeout is true, context's deadline
//     among them): the command may run, or have run, with its answer lost;
//   - a broken connection: io.EOF, io.ErrUnexpectedEOF or any other
//     net.Error (a reset, a broken pipe, a refused connection). The reply
//     of a command already sent was lost, as when its master was killed
//     right after running it. Even a refused connection proves nothing:
//     go-redis retries a broken connection (MaxRetries, 3 by default) and
//     returns only its last attempt's error, so a refusal may follow a
//     first attempt that sent the command and lost its reply.
//
// Other errors come back as they are, as do nil and an error already
// marked: an error Redis answered (OOM, READONLY, NOSCRIPT, a script's
// error: the command did not run, or ran to that error), a cancelled
// context (the caller left), a client closed or a pool timeout (go-redis
// had no connection to send it on). The sandbox reports those as Redis
// being unavailable. Mark only the errors of calls that change something:
// a read that failed changed nothing, whatever its error.
func MarkUnconfirmed(err error) error {
	if err == nil || errors.Is(err, ErrUnconfirmed) || !Unconfirmed(err) && !connectionLost(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnconfirmed, err)
}

// connectionLost reports whether err is a network failure of the call's
// connection (see MarkUnconfirmed) rather than an answer or the caller's
// cancellation. A cancelled dial is a net.Error too, hence the check.
func connectionLost(err error) bool {
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	default:
		return errors.As(err, &netErr)
	}
}

// Unconfirmed reports whether err is that of a call the master answered
// but whose replication was not confirmed in time (--redis-wait's WAIT
// short of replicas, or its answer late): the command keeps the master's
// answer.
func Unconfirmed(err error) bool {
	var u interface{ Unconfirmed() bool }
	return errors.As(err, &u) && u.Unconfirmed()
}
