package rediscall

import (
	"errors"
	"fmt"
	"net"
)

// ErrUnconfirmed marks the error of a Redis call whose outcome is unknown:
// its answer did not come in time, or its replicas did not acknowledge it
// in time (--redis-wait). A write that failed so may have been applied,
// and its caller must not report it as not done: a client that resends a
// trial referral blindly would refer the patient twice. Each Redis-backed
// store wraps it (MarkUnconfirmed), so that the sandbox's HTTP layer tells
// such a failure apart with errors.Is, knowing nothing of Redis's errors.
var ErrUnconfirmed = errors.New("redis did not confirm the call: it may have taken effect")

// MarkUnconfirmed returns err, the error of a Redis call, wrapped with
// ErrUnconfirmed when the call may have taken effect unseen: a timeout (a
// net.Error whose Timeout is true: the command may run, or have run, with
// its answer lost) or an Unconfirmed error. Other errors (a refused
// connection, an error Redis answered) come back as they are, as does nil
// and an error already marked: the sandbox reports those as Redis being
// unavailable.
func MarkUnconfirmed(err error) error {
	var timeout net.Error
	if err == nil || errors.Is(err, ErrUnconfirmed) || !Unconfirmed(err) && !(errors.As(err, &timeout) && timeout.Timeout()) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnconfirmed, err)
}

// Unconfirmed reports whether err is that of a call the master answered
// but whose replication was not confirmed in time (--redis-wait's WAIT
// short of replicas, or its answer late): the command keeps the master's
// answer.
func Unconfirmed(err error) bool {
	var u interface{ Unconfirmed() bool }
	return errors.As(err, &u) && u.Unconfirmed()
}
