package scenarios

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Decide implements Engine.Decide on the shared state: the request is
// matched against the cached index, and each candidate in order counts one
// match in Redis (fireScript) until one fires.
//
// Each script call carries a fresh call id, and the script records its
// decision under it: go-redis sends a command again when its read timed out
// (MaxRetries), while the first one may still run once Redis resumes, so
// without the id a stalled Redis made one request count twice. With it, the
// retry finds the decision the first run made and returns that one, so a
// times: N rule forces exactly N answers and each decision reaches the
// request it was made for.
//
// go-redis gives up on a stall in some cases (a new connection's handshake
// that times out is not retried), so Decide itself sends a call again, with
// the same id, while Redis stalls or fails for up to stallBudget: a script
// that ran late, or on a node that died before answering, then still
// reaches its request.
func (s *RedisEngine) Decide(ctx context.Context, req Request) (Decision, bool, error) {
	stall := newStall(s.stallBudget)
	var index *ruleIndex
	err := stall.ride(ctx, func() error {
		var err error
		index, err = s.current(ctx)
		return err
	})
	if err != nil {
		return Decision{}, false, err
	}
	for _, en := range index.candidates(req) {
		r := en.rule
		if len(r.Timeline) > 0 {
			// The phase is a function of the shared clocks and the start
			// stored with the rule, so every replica picks the same one.
			phase, _, live := en.timelineNow(s.clientNow)
			if !live || !phase.hasEffect() || !phase.matchesBesidesPath(req) {
				continue // retired (leaves Redis with the next change), or a lull
			}
			r = phase
		}
		perClient := "0"
		if r.PerClient {
			perClient = "1"
		}
		keys := []string{s.defsKey, s.orderKey, s.verKey, s.counterKey(r.ID), s.keys + "call:" + newCallID()}
		var res []int64
		err := stall.resend(ctx, func() error {
			cmd := fireScript.Run(ctx, s.rdb, keys,
				r.ID, req.counterKey(), r.After, r.Times, perClient,
				strconv.FormatFloat(r.Probability, 'g', -1, 64), strconv.FormatUint(r.Seed, 10),
				s.cfg.Clock.Now().UnixNano(), s.callTTL.Milliseconds())
			var err error
			res, err = cmd.Int64Slice()
			if unconfirmedAnswer(err) {
				res = int64s(cmd.Val())
			}
			return err
		})
		if unconfirmedAnswer(err) && len(res) == 2 {
			// The master made the decision and holds it; its replicas did
			// not confirm it within the budget (--redis-wait). A 503 would
			// leave the count spent and no request forced; delivering it
			// is exact unless this master too dies before replicating.
			err = nil
		}
		if err != nil {
			return Decision{}, false, fmt.Errorf("%w: count a match of rule %s: %w", ErrUnavailable, r.ID, err)
		}
		if len(res) != 2 {
			return Decision{}, false, fmt.Errorf("%w: fire script answered %v", ErrUnavailable, res)
		}
		if res[0] != 1 {
			continue // did not fire, or removed since the list was read
		}
		return r.decide(matchRNG(r.Seed, res[1])), true, nil
	}
	return Decision{}, false, nil
}

// stall rides out a Redis stall of up to budget, counted from the first
// call of a request: a call that timed out is sent again until the budget
// is spent or ctx ends. Other failures (a refused connection: Redis is
// down, not slow) end the request at once, with its 503.
type stall struct {
	deadline time.Time
}

func newStall(budget time.Duration) stall { return stall{deadline: time.Now().Add(budget)} }

// ride runs call, and again while it times out and the budget lasts.
func (st stall) ride(ctx context.Context, call func() error) error {
	for {
		err := call()
		var timeout net.Error
		if !errors.As(err, &timeout) || !timeout.Timeout() || ctx.Err() != nil || time.Now().After(st.deadline) {
			return err
		}
	}
}

// unconfirmedAnswer reports whether err is that of a call the master
// answered but whose replication was not confirmed in time (--redis-wait's
// WAIT short of replicas): the command keeps the master's answer.
func unconfirmedAnswer(err error) bool {
	var u interface{ Unconfirmed() bool }
	return errors.As(err, &u) && u.Unconfirmed()
}

// int64s is a script's array answer as integers, nil if it is not one.
func int64s(v any) []int64 {
	vals, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(vals))
	for _, x := range vals {
		n, ok := x.(int64)
		if !ok {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// resendPause is how long resend waits between two sends of a call, so
// that a refused connection (a node dead until its replica takes over)
// is not hammered.
const resendPause = 100 * time.Millisecond

// resend runs a call that takes effect once per call id, and sends it
// again after any error while the budget lasts. No error proves the call
// did not run: go-redis's own retries may end on a refused connection
// after its first send ran on a node that then died, as a master killed
// in a failover. Sent again under its id, the call gets back the decision
// made, or makes the only one, so a count spent always reaches its
// request.
func (st stall) resend(ctx context.Context, call func() error) error {
	for {
		err := call()
		if err == nil || ctx.Err() != nil || time.Now().Add(resendPause).After(st.deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(resendPause):
		}
	}
}

// newCallID returns a random id for one script call: 128 bits, so two calls
// never share one.
func newCallID() string {
	var b [16]byte
	for i := range 2 {
		v := rand.Uint64()
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}

// retryOptions are the timeouts and retries go-redis applies to one
// command of rdb. A cluster client sends a command up to MaxRedirects+1
// times (redirections and transient errors), each time through a node
// client that retries MaxRetries times itself, so its attempts multiply.
func retryOptions(rdb redis.UniversalClient) *redis.Options {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options()
	case *redis.ClusterClient:
		o := c.Options()
		return &redis.Options{
			MaxRetries:      (max(o.MaxRetries, 0)+1)*(max(o.MaxRedirects, 0)+1) - 1,
			ReadTimeout:     o.ReadTimeout,
			WriteTimeout:    o.WriteTimeout,
			MaxRetryBackoff: o.MaxRetryBackoff,
		}
	default:
		// Unknown clients (a ring, a failover client): assume go-redis's
		// defaults, three retries of three-second timeouts.
		return &redis.Options{MaxRetries: 3, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second, MaxRetryBackoff: 512 * time.Millisecond}
	}
}

// retryWindow is how long go-redis may go on with one command: every
// attempt waiting for its write and read timeouts, with backoff between
// them. A timeout of 0 (none; Options has its defaults filled in) counts as
// a minute.
func retryWindow(o *redis.Options) time.Duration {
	timeout := func(d time.Duration) time.Duration {
		if d <= 0 {
			return time.Minute
		}
		return d
	}
	attempts := time.Duration(max(o.MaxRetries, 0) + 1)
	return attempts * (timeout(o.ReadTimeout) + timeout(o.WriteTimeout) + max(o.MaxRetryBackoff, 0))
}

// stallBudget is how long Decide rides out a stall (see stall): as long as
// go-redis itself waits for an answer to one command, all its attempts'
// read timeouts, so a pause a few times longer than the timeout, which
// go-redis alone may give up on (a new connection's handshake that times
// out is not retried), still ends in the decision made.
func stallBudget(o *redis.Options) time.Duration {
	if o.ReadTimeout <= 0 {
		return 0 // no timeout: go-redis waits for the answer itself
	}
	return time.Duration(max(o.MaxRetries, 0)+1) * o.ReadTimeout
}

// callTTL is how long a decision is kept for repeats of its call: past the
// last moment Decide may send it again (stallBudget) and the whole of
// go-redis's retries of that last send, with a margin, so a repeat never
// comes after the record is gone.
func callTTL(o *redis.Options) time.Duration {
	return stallBudget(o) + retryWindow(o) + 10*time.Second
}
