package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/referrals-sandbox/referrals-sandbox/internal/rediscall"
	"github.com/referrals-sandbox/referrals-sandbox/internal/redisslot"
)

// Redis is the Store of replicas sharing Redis: one hash per bucket
// (tokens, at) under a prefix, so every replica spends from one bucket.
// A bucket's key and its calls' keys carry the hash tag of their client
// (redisslot.ClientTag), so on a Redis Cluster they share one slot, the
// one the client's records sit in, and the buckets spread over the shards
// with the clients.
// Buckets carry no expiry: a bucket is judged on the sandbox clock, and an
// expiry on Redis's real time would refill one the sandbox clock did not,
// unlike the Memory store. There is at most one per client, and a deleted
// client's is dropped.
//
// A Swap takes effect once per call id and reaches its Take: its decision
// is recorded under the call's key for callTTL, so a Swap go-redis retries
// (it retries a command whose read timed out, and the first try still runs
// when Redis resumes) answers the decision already made instead of spending
// a second token; and a Swap that failed is sent again under its id while
// a stall budget lasts (rediscall.Budget.Resend), so a token spent by a
// script whose answer was lost (its master killed before answering, Redis
// paused past every retry) still reaches the request rather than a 503.
type Redis struct {
	rdb redis.UniversalClient
	// prefix starts every bucket's key, calls the keys of recorded calls.
	prefix, calls string
	// callTTL is how long a decision is kept for a repeat of its call,
	// stallBudget how long a Swap is sent again (see rediscall).
	callTTL, stallBudget time.Duration
}

// NewRedis returns the buckets kept in rdb under prefix (e.g.
// "referrals-sandbox:ratelimit:"); the calls are recorded under
// prefix's twin ending "-call:" rather than ":", apart from the buckets.
// On a cluster prefix holds no hash tag: each key takes its client's.
func NewRedis(rdb redis.UniversalClient, prefix string) *Redis {
	o := rediscall.Options(rdb)
	return &Redis{
		rdb: rdb, prefix: prefix, calls: strings.TrimSuffix(prefix, ":") + "-call:",
		callTTL: rediscall.CallTTL(o), stallBudget: rediscall.StallBudget(o),
	}
}

// bucketKey is key's bucket: the prefix, then key's client tag.
func (r *Redis) bucketKey(key string) string { return r.prefix + redisslot.ClientTag(key) }

// callKey is where call's decision on key's bucket is recorded, in the
// bucket's slot.
func (r *Redis) callKey(key, call string) string {
	return r.calls + redisslot.ClientTag(key) + call
}

// swapScript stores a bucket's next state if it is still the one judged,
// and records the decision under the call's key; a call recorded already
// answers that decision and changes nothing but the call key's expiry (a
// write, so a --redis-wait WAIT after it covers the first call's). KEYS: bucket, call. ARGV:
// '1' when the old state was found, old tokens, old at, next tokens, next
// at, decision, call memory in ms. It answers {1, decision} or {0, ”} when
// the bucket changed in between.
var swapScript = redis.NewScript(`
local done = redis.call('GET', KEYS[2])
if done then
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
  return {1, done}
end
local cur = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local stale = {0, cur[1] or '', cur[2] or ''}
if ARGV[1] == '1' then
  if cur[1] ~= ARGV[2] or cur[2] ~= ARGV[3] then return stale end
elseif cur[1] or cur[2] then
  return stale
end
redis.call('HSET', KEYS[1], 'tokens', ARGV[4], 'at', ARGV[5])
redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[7])
return {1, ARGV[6]}
`)

// Get returns key's state.
func (r *Redis) Get(ctx context.Context, key string) (State, bool, error) {
	vals, err := r.rdb.HMGet(ctx, r.bucketKey(key), "tokens", "at").Result()
	if err != nil {
		return State{}, false, err
	}
	tokens, _ := vals[0].(string)
	at, _ := vals[1].(string)
	if tokens == "" && at == "" {
		return State{}, false, nil
	}
	st, err := decodeState(tokens, at)
	return st, err == nil, err
}

// Swap stores next if key's state is still old (see Store).
func (r *Redis) Swap(ctx context.Context, key, call string, old State, found bool, next State, d Decision) (Swapped, error) {
	oldTokens, oldAt := encodeState(old)
	nextTokens, nextAt := encodeState(next)
	was := "0"
	if found {
		was = "1"
	}
	var res []any
	err := rediscall.NewBudget(r.stallBudget).Resend(ctx, func() error {
		cmd := swapScript.Run(ctx, r.rdb, []string{r.bucketKey(key), r.callKey(key, call)},
			was, oldTokens, oldAt, nextTokens, nextAt, encodeDecision(d), r.callTTL.Milliseconds())
		var err error
		if res, err = cmd.Slice(); rediscall.Unconfirmed(err) {
			// The master stored the swap and holds the decision; its
			// replicas did not confirm it in time (--redis-wait). A 503
			// would leave the token spent and the request refused.
			res, _ = cmd.Val().([]any)
			if len(res) > 0 {
				err = nil
			}
		}
		return err
	})
	if err != nil {
		return Swapped{}, err
	}
	if ok, _ := res[0].(int64); ok == 1 && len(res) == 2 {
		text, _ := res[1].(string)
		got, err := decodeDecision(text)
		return Swapped{OK: err == nil, Decision: got}, err
	}
	if len(res) != 3 {
		return Swapped{}, fmt.Errorf("swap script answered %d values", len(res))
	}
	tokens, _ := res[1].(string)
	at, _ := res[2].(string)
	if tokens == "" && at == "" {
		return Swapped{}, nil
	}
	cur, err := decodeState(tokens, at)
	return Swapped{Current: cur, Found: err == nil}, err
}

// Forget drops key's bucket.
func (r *Redis) Forget(ctx context.Context, key string) error {
	return r.rdb.Del(ctx, r.bucketKey(key)).Err()
}

// Reset drops every bucket, found with SCAN on every node (at most one
// per client). A failure part way leaves some buckets full and others
// not: the caller reports it, and a retry finishes the job.
func (r *Redis) Reset(ctx context.Context) error {
	return r.eachBucket(ctx, func(ctx context.Context, node redis.Cmdable, key string) error {
		return node.Del(ctx, key).Err()
	})
}

// eachBucket calls fn with every bucket's key and the node holding it,
// from one goroutine per node at once.
func (r *Redis) eachBucket(ctx context.Context, fn func(ctx context.Context, node redis.Cmdable, key string) error) error {
	return redisslot.ForEachNode(ctx, r.rdb, func(ctx context.Context, node redis.Cmdable) error {
		iter := node.Scan(ctx, 0, globEscape(r.prefix)+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := fn(ctx, node, iter.Val()); err != nil {
				return err
			}
		}
		return iter.Err()
	})
}

// encodeState writes a state exactly: the shortest decimal that reads back
// as the same float64, and nanoseconds.
func encodeState(st State) (tokens, at string) {
	return strconv.FormatFloat(st.Tokens, 'g', -1, 64), strconv.FormatInt(st.At.UnixNano(), 10)
}

func decodeState(tokens, at string) (State, error) {
	t, err := strconv.ParseFloat(tokens, 64)
	if err != nil {
		return State{}, fmt.Errorf("bucket tokens %q: %w", tokens, err)
	}
	ns, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return State{}, fmt.Errorf("bucket time %q: %w", at, err)
	}
	return State{Tokens: t, At: time.Unix(0, ns).UTC()}, nil
}

// encodeDecision writes a decision as "allowed tokens retryAfterNs".
func encodeDecision(d Decision) string {
	allowed := "0"
	if d.Allowed {
		allowed = "1"
	}
	return allowed + " " + strconv.FormatFloat(d.Tokens, 'g', -1, 64) + " " + strconv.FormatInt(int64(d.RetryAfter), 10)
}

func decodeDecision(s string) (Decision, error) {
	parts := strings.Fields(s)
	if len(parts) != 3 {
		return Decision{}, fmt.Errorf("recorded decision %q", s)
	}
	tokens, err1 := strconv.ParseFloat(parts[1], 64)
	wait, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Decision{}, fmt.Errorf("recorded decision %q: %w", s, err)
	}
	return Decision{Allowed: parts[0] == "1", Tokens: tokens, RetryAfter: time.Duration(wait)}, nil
}

// globEscape quotes the characters SCAN's MATCH pattern treats specially,
// so a --redis-prefix holding them matches only itself.
func globEscape(s string) string {
	var out strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			out.WriteByte('\\')
		}
		out.WriteRune(r)
	}
	return out.String()
}

// Len counts the buckets kept now, found with SCAN on every node (at most
// one per client): tests check that forged identities add none.
func (r *Redis) Len(ctx context.Context) (int, error) {
	var n atomic.Int64
	err := r.eachBucket(ctx, func(context.Context, redis.Cmdable, string) error {
		n.Add(1)
		return nil
	})
	return int(n.Load()), err
}
