package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// bucketScript is a token bucket judged at the caller's time, not Redis's:
// the sandbox's buckets follow the sandbox clock (a clock advance refills
// them, as in process), which redis_rate's GCRA, on Redis's TIME, cannot.
// It runs atomically, so requests through any replica spend from one
// bucket. KEYS[1] is the bucket (hash: tokens, at); ARGV: rate per second,
// burst, now in microseconds (exact in Lua's doubles until year 2255),
// 1 to spend a token or 0 to look. It answers {allowed, tokens}, tokens
// as a string since Redis would truncate a Lua number to an integer. A
// refused request spends nothing, as rate.Limiter's cancelled reservation.
// The key expires once the bucket would be full again in real time.
var bucketScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local spend = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) / 1e6 * rate)
end
local allowed = 0
if spend == 1 and tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
end
return {allowed, tostring(tokens)}
`)

// sharedBuckets is the bucketStore of replicas sharing Redis: one bucket
// per client for all of them, one round trip (EVALSHA) per request.
type sharedBuckets struct {
	rdb *redis.Client
	// prefix starts each client's bucket key (sharedKeys.rateLimit).
	prefix string
}

func (b sharedBuckets) run(ctx context.Context, clientID string, limit float64, burst int, now time.Time, spend int) (bucketState, error) {
	res, err := bucketScript.Run(ctx, b.rdb, []string{b.prefix + clientID},
		strconv.FormatFloat(limit, 'g', -1, 64), burst, now.UnixMicro(), spend).Slice()
	if err != nil {
		return bucketState{}, sharedFailure("rate limit bucket of "+clientID, err)
	}
	if len(res) != 2 {
		return bucketState{}, fmt.Errorf("rate limit bucket of %s: script answered %d values", clientID, len(res))
	}
	allowed, _ := res[0].(int64)
	text, _ := res[1].(string)
	tokens, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return bucketState{}, fmt.Errorf("rate limit bucket of %s: tokens %q: %w", clientID, text, err)
	}
	st := bucketState{allowed: allowed == 1, tokens: tokens}
	if spend == 1 && !st.allowed {
		st.wait = time.Duration((1 - tokens) / limit * float64(time.Second))
	}
	return st, nil
}

func (b sharedBuckets) take(ctx context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error) {
	return b.run(ctx, clientID, limit, burst, now, 1)
}

func (b sharedBuckets) peek(ctx context.Context, clientID string, limit float64, burst int, now time.Time) (bucketState, error) {
	return b.run(ctx, clientID, limit, burst, now, 0)
}

func (b sharedBuckets) forget(ctx context.Context, clientID string) error {
	if err := b.rdb.Del(ctx, b.prefix+clientID).Err(); err != nil {
		return sharedFailure("drop the rate limit bucket of "+clientID, err)
	}
	return nil
}

// reset drops every bucket, found with SCAN (at most one per client).
func (b sharedBuckets) reset(ctx context.Context) error {
	iter := b.rdb.Scan(ctx, 0, globEscape(b.prefix)+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := b.rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return sharedFailure("drop rate limit bucket "+iter.Val(), err)
		}
	}
	if err := iter.Err(); err != nil {
		return sharedFailure("list the rate limit buckets", err)
	}
	return nil
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
