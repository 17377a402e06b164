package rediscall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
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
//   - an error go-redis retries though Redis answered it (LOADING,
//     READONLY, CLUSTERDOWN, TRYAGAIN, "max number of clients reached"),
//     and its pool timeout, which can end a retry: in a failover the
//     first attempt's reply is lost (EOF) and the retries meet a demoted
//     master (READONLY) or a cluster still electing (CLUSTERDOWN), so the
//     last error hides a send that ran.
//
// Other errors come back as they are, as do nil and an error already
// marked: an error Redis answered that go-redis does not retry (OOM,
// NOSCRIPT, a script's error: the command did not run, or ran to that
// error), a cancelled context (the caller left) and a client closed. The
// sandbox answers them 503 too, and says what Redis refused when it
// refused (Refusal: out of memory, say) rather than that it cannot be
// reached. Mark only the errors
// of calls that change something: a read that failed changed nothing,
// whatever its error.
func MarkUnconfirmed(err error) error {
	if err == nil || errors.Is(err, ErrUnconfirmed) || !Unconfirmed(err) && !connectionLost(err) && !retriedAfterSend(err) {
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

// retriedTexts start the error replies go-redis v9's shouldRetry retries,
// and poolTimeout is its pool's timeout, which it does not export.
var retriedTexts = []string{"LOADING ", "READONLY ", "CLUSTERDOWN ", "TRYAGAIN ", "ERR max number of clients reached"}

const poolTimeout = "redis: connection pool timeout"

// retriedAfterSend reports whether err may be the last of go-redis's
// retries of a command an earlier attempt sent (see MarkUnconfirmed):
// a reply it retries, or no connection from the pool for a retry.
func retriedAfterSend(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return err.Error() == poolTimeout || strings.HasSuffix(err.Error(), ": "+poolTimeout)
	}
	for _, prefix := range retriedTexts {
		if strings.HasPrefix(reply.Error(), prefix) {
			return true
		}
	}
	return false
}

// Unconfirmed reports whether err is that of a call the master answered
// but whose replication was not confirmed in time (--redis-wait's WAIT
// short of replicas, or its answer late): the command keeps the master's
// answer.
func Unconfirmed(err error) bool {
	var u interface{ Unconfirmed() bool }
	return errors.As(err, &u) && u.Unconfirmed()
}
