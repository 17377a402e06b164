package ratelimit

import (
	"context"
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
// A take is one script (takeScript) that judges the bucket at the sandbox
// clock's now, passed in, and spends from it in the same step: takes from
// any number of callers and replicas never contend, and a client under its
// rate is never refused for being busy.
// A bucket's key and its calls' keys carry the hash tag of their client
// (redisslot.ClientTag), so on a Redis Cluster they share one slot, the
// one the client's records sit in, and the buckets spread over the shards
// with the clients.
// Buckets carry no expiry: a bucket is judged on the sandbox clock, and an
// expiry on Redis's real time would refill one the sandbox clock did not,
// unlike the Memory store. There is at most one per client, and a deleted
// client's is dropped.
//
// A take takes effect once per call id and reaches its request: an
// allowed take's tokens are recorded under the call's key for callTTL, so
// a take go-redis retries (it retries a command whose read timed out, and
// the first try still runs when Redis resumes) answers the decision
// already made instead of spending a second token; and a take that failed
// is sent again under its id while a stall budget lasts
// (rediscall.Budget.Resend), so a token spent by a script whose answer was
// lost (its master killed before answering, Redis paused past every retry)
// still reaches the request rather than a 503. A take Redis refused
// (out of memory under maxmemory, say) is not sent again: the answer is
// final, and the request fails at once.
type Redis struct {
	rdb redis.UniversalClient
	// prefix starts every bucket's key, calls the keys of recorded calls.
	prefix, calls string
	// callTTL is how long a decision is kept for a repeat of its call,
	// stallBudget how long a take is sent again (see rediscall).
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

// takeScript is take (bucket.go) in one step. KEYS: bucket, call. ARGV:
// rate, burst, now in nanoseconds since 1970, call memory in ms. It
// answers {allowed (1 or 0), tokens left}.
//
// The arithmetic is at's, operation for operation, so that both stores
// answer alike to the last bit (the conformance suite pins exact waits):
// Lua's numbers are float64 as Go's, and the VM rounds after each
// operation. Nanoseconds since 1970 exceed float64's exact integers, so
// times are split into seconds and nanoseconds, and the elapsed time is
// Duration.Seconds's float64(sec) + float64(nsec)/1e9. Tokens travel as
// %.17g, which reads back as the same float64.
//
// The call's record is read before anything is written, so a call that
// took effect answers its decision even while Redis refuses writes (out
// of memory), and a refusal proves this call has not spent a token. A
// refused take whose refill is judged the same later (the clock did not
// move back) writes nothing. A recorded call's key gets its expiry again
// (a write, so a --redis-wait WAIT after it covers the first call's).
var takeScript = redis.NewScript(`
local done = redis.call('GET', KEYS[2])
if done then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  return {1, done}
end
local function split(ns)
  local sign = 1
  if string.sub(ns, 1, 1) == '-' then
    sign = -1
    ns = string.sub(ns, 2)
  end
  return sign * (tonumber(string.sub(ns, 1, -10)) or 0), sign * tonumber(string.sub(ns, -9))
end
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local cur = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, back = burst, false
if cur[1] or cur[2] then
  tokens = tonumber(cur[1])
  local nowSec, nowNs = split(now)
  local atSec, atNs = split(cur[2])
  local sec, ns = nowSec - atSec, nowNs - atNs
  if sec > 0 or sec == 0 and ns > 0 then
    if ns < 0 then
      sec = sec - 1
      ns = ns + 1000000000
    end
    local elapsed = sec + ns / 1e9
    tokens = math.min(burst, tokens + elapsed * rate)
  elseif sec < 0 or ns < 0 then
    back = true
  end
end
local allowed = tokens >= 1
if allowed then tokens = tokens - 1 end
local text = string.format('%.17g', tokens)
if allowed or back then
  redis.call('HSET', KEYS[1], 'tokens', text, 'at', now)
end
if allowed then
  redis.call('SET', KEYS[2], text, 'PX', ARGV[4])
  return {1, text}
end
return {0, text}
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

// Take judges key's bucket and spends a token when it holds one, in one
// script (see Store and takeScript).
func (r *Redis) Take(ctx context.Context, key, call string, l Limit, now time.Time) (Decision, error) {
	rate := strconv.FormatFloat(l.Rate, 'g', -1, 64)
	at := strconv.FormatInt(now.UnixNano(), 10)
	var res []any
	err := rediscall.NewBudget(r.stallBudget).Resend(ctx, func() error {
		cmd := takeScript.Run(ctx, r.rdb, []string{r.bucketKey(key), r.callKey(key, call)},
			rate, l.Burst, at, r.callTTL.Milliseconds())
		var err error
		if res, err = cmd.Slice(); rediscall.Unconfirmed(err) {
			// The master spent the token and holds the decision; its
			// replicas did not confirm it in time (--redis-wait). A 503
			// would leave the token spent and the request refused.
			res, _ = cmd.Val().([]any)
			if len(res) == 2 {
				err = nil
			}
		}
		return err
	})
	if err != nil {
		return Decision{}, err
	}
	if len(res) != 2 {
		return Decision{}, fmt.Errorf("take script answered %d values", len(res))
	}
	allowed, _ := res[0].(int64)
	text, _ := res[1].(string)
	tokens, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return Decision{}, fmt.Errorf("take script's tokens %q: %w", text, err)
	}
	return decide(allowed == 1, tokens, l), nil
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

// decodeState reads a state as the take script stores it: tokens as a
// decimal that reads back exactly, the time in nanoseconds.
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
