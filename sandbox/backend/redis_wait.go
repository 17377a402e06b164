package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitHook makes every write wait for replicas (--redis-wait N): Redis
// replicates asynchronously, so a write a master acknowledged can be lost
// when a replica that had not received it takes over. WAIT N timeout
// blocks until N replicas acknowledged every earlier write of its
// connection, so the hook sends it on the same connection as the write:
//
//   - a single command or script goes out in one pipeline with the WAIT;
//   - a MULTI/EXEC cannot be followed in its own pipeline, so once it is
//     done the hook writes a marker key (in the sandbox's own slot, so on
//     the same node) and WAITs after that: replicas apply the stream in
//     order, so acknowledging the marker acknowledges the transaction.
//
// A write that fewer than N replicas acknowledged within the timeout
// fails with an error although the master has it: exactly the case of a
// write whose answer was lost, which the exactly-once scripts already
// handle. So the error is a timeout (tooFewReplicas): what resends a
// timed-out call under its id (go-redis's cluster client, a rule
// decision riding out a stall) resends this one, and gets the decision
// the master made once its replicas have it, rather than a 503 that
// leaves a count spent that no client saw.
type waitHook struct {
	client   *redis.Client
	replicas int64
	timeout  time.Duration
	marker   string
}

// newWaitHook WAITs for replicas with four fifths of the read timeout
// (--redis-timeout) as WAIT's own limit, so Redis's answer (too few
// replicas) arrives before the read gives up on it.
func newWaitHook(client *redis.Client, replicas int, timeout time.Duration, marker string) waitHook {
	return waitHook{client: client, replicas: int64(replicas), timeout: max(timeout*4/5, time.Millisecond), marker: marker}
}

func (h waitHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h waitHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isWrite(cmd) {
			return next(ctx, cmd)
		}
		pipe := h.client.Pipeline()
		_ = pipe.Process(ctx, cmd)
		wait := h.waitCmd(ctx)
		_ = pipe.Process(ctx, wait)
		_, _ = pipe.Exec(ctx)
		if err := cmd.Err(); err != nil {
			return err
		}
		return h.checkWait(cmd, wait)
	}
}

func (h waitHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[len(cmds)-1].Name() == "wait" {
			return next(ctx, cmds) // the hook's own pipeline: it has its WAIT
		}
		writes := false
		for _, c := range cmds {
			writes = writes || isWrite(c)
		}
		if !writes {
			return next(ctx, cmds)
		}
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			if err := next(ctx, cmds); err != nil {
				return err
			}
			pipe := h.client.Pipeline()
			set := pipe.Set(ctx, h.marker, "1", time.Minute)
			wait := h.waitCmd(ctx)
			_ = pipe.Process(ctx, wait)
			_, _ = pipe.Exec(ctx)
			if err := set.Err(); err != nil {
				return fmt.Errorf("wait for replicas: %w", err)
			}
			return h.checkWait(cmds[len(cmds)-1], wait)
		}
		wait := h.waitCmd(ctx)
		err := next(ctx, append(cmds, wait))
		if err != nil {
			return err
		}
		return h.checkWait(cmds[len(cmds)-1], wait)
	}
}

func (h waitHook) waitCmd(ctx context.Context) *redis.IntCmd {
	return redis.NewIntCmd(ctx, "wait", h.replicas, h.timeout.Milliseconds())
}

// checkWait turns a WAIT that counted too few replicas, or that failed
// (its answer timed out on a loaded Redis), into an error of cmd, so its
// caller sees the write as failed. cmd itself succeeded: its answer came
// before the WAIT's, so either way only its replication is unconfirmed.
func (h waitHook) checkWait(cmd redis.Cmder, wait *redis.IntCmd) error {
	n, err := wait.Result()
	switch {
	case err != nil:
		err = tooFewReplicas{want: h.replicas, timeout: h.timeout, cause: err}
	case n < h.replicas:
		err = tooFewReplicas{got: n, want: h.replicas, timeout: h.timeout}
	}
	if err != nil {
		err = fmt.Errorf("redis --redis-wait: %w", err)
		cmd.SetErr(err)
	}
	return err
}

// tooFewReplicas is a WAIT that counted fewer replicas than --redis-wait
// within its timeout, or that failed. It is a net.Error whose Timeout is
// true: the write may yet be acknowledged, as when a command's answer
// timed out.
type tooFewReplicas struct {
	got, want int64
	timeout   time.Duration
	// cause, when set, is why the WAIT itself failed: got is unknown.
	cause error
}

func (e tooFewReplicas) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("the WAIT for %d replicas failed: %v", e.want, e.cause)
	}
	return fmt.Sprintf("only %d of %d replicas acknowledged the write within %s", e.got, e.want, e.timeout)
}

// Unwrap returns why the WAIT failed, if it did.
func (e tooFewReplicas) Unwrap() error { return e.cause }

// Timeout reports true: see tooFewReplicas.
func (e tooFewReplicas) Timeout() bool { return true }

// Temporary reports true (net.Error asks; a replica may come back).
func (e tooFewReplicas) Temporary() bool { return true }

// Unconfirmed reports true: the command ran on the master and keeps its
// answer; only its replication is unconfirmed. A rule decision still
// unconfirmed when Decide's budget runs out is delivered (see
// scenarios.RedisEngine.Decide).
func (e tooFewReplicas) Unconfirmed() bool { return true }

// readOnly are the commands the sandbox sends that never write, so need
// no WAIT. Anything else (scripts included) is treated as a write.
var readOnly = map[string]bool{
	"get": true, "mget": true, "hget": true, "hmget": true, "hgetall": true, "hexists": true, "hlen": true,
	"exists": true, "scan": true, "xrange": true, "xrevrange": true, "xlen": true, "zrange": true,
	"zrangebyscore": true, "zcard": true, "zscore": true, "smembers": true, "scard": true, "lrange": true,
	"llen": true, "ping": true, "ttl": true, "pttl": true, "time": true, "info": true, "type": true,
	"strlen": true, "hello": true, "auth": true, "select": true, "client": true, "cluster": true,
	"wait": true, "watch": true, "unwatch": true, "dbsize": true, "script": true, "readonly": true,
	"multi": true, "exec": true, "discard": true, "command": true, "role": true,
}

func isWrite(cmd redis.Cmder) bool { return !readOnly[cmd.Name()] }
