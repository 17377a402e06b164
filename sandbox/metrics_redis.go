package sandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisHook counts the round trips of the shared mode's Redis client and
// times them: go-redis calls it around every command and pipeline, so the
// store, the journal, the rules, the clocks and the rate limits are all
// measured without touching them.
type redisHook struct{ m *metrics }

// redisHook returns the hook Open adds to the shared mode's client.
func (m *metrics) redisHook() redis.Hook { return redisHook{m: m} }

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
	h.m.redisCalls.WithLabelValues(command).Inc()
	h.m.redisDuration.WithLabelValues(command).Observe(elapsed.Seconds())
	if kind := redisErrorKind(err); kind != "" {
		h.m.redisErrors.WithLabelValues(kind).Inc()
	}
}

// redisCommand is the command's name; the sandbox sends a fixed set of
// them, so the label stays small.
func redisCommand(cmd redis.Cmder) string {
	name := strings.ToLower(cmd.Name())
	if name == "" {
		return otherLabel
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
