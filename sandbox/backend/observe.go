package backend

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// CallObserver is told of every round trip to the shared state's Redis:
// the command's name ("pipeline" for a pipeline), how long it took, and
// the kind of its error ("" for a success; else "timeout", "connection",
// "reply", "conflict" or "other").
type CallObserver interface {
	ObserveCall(command string, elapsed time.Duration, errKind string)
}

// ObserveCalls tells o of every round trip to the Redis Open dialled, so
// the store, the journal, the rules, the clocks and the rate limits are
// all measured without touching them. A backend in this process, or on a
// client its caller keeps (Shared), makes none to tell of.
func (b *Backend) ObserveCalls(o CallObserver) {
	if b.own != nil {
		b.own.AddHook(redisHook{o: o})
	}
}

// redisHook tells a CallObserver of each command and pipeline go-redis
// runs.
type redisHook struct{ o CallObserver }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.observe(redisCommand(cmd), time.Since(start), err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.observe("pipeline", time.Since(start), err)
		return err
	}
}

func (h redisHook) observe(command string, elapsed time.Duration, err error) {
	h.o.ObserveCall(command, elapsed, redisErrorKind(err))
}

// redisCommand is the command's name; the sandbox sends a fixed set of
// them, so the label stays small.
func redisCommand(cmd redis.Cmder) string {
	name := strings.ToLower(cmd.Name())
	if name == "" {
		return "other"
	}
	return name
}

// redisErrorKind sorts a round trip's error; "" for success and for the
// answers that are not failures (a missing key, an unloaded script).
func redisErrorKind(err error) string {
	var netErr net.Error
	var replyErr redis.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil):
		return ""
	case redis.HasErrorPrefix(err, "NOSCRIPT"):
		// go-redis's Script.Run tries EVALSHA first and sends the script
		// on this answer: a first use, not a failure.
		return ""
	case errors.Is(err, redis.TxFailedErr):
		return "conflict"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &replyErr):
		return "reply"
	case errors.As(err, &netErr), errors.Is(err, redis.ErrClosed), errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF):
		return "connection"
	}
	return "other"
}
