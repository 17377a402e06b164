package clock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKeys are the keys of the shared clock.
type RedisKeys struct {
	// Version grows with every move, so a replica never replaces a newer
	// clock with an older read (PerClient.Apply).
	Version string
	// Global is the sandbox-wide offset from real time, in ns.
	Global string
	// Clients holds the clients' own offsets, in ns, by client id.
	Clients string
	// Calls starts the keys that record a move already made.
	Calls string
}

// NewRedisKeys lays the keys out under prefix.
func NewRedisKeys(prefix string) RedisKeys {
	return RedisKeys{
		Version: prefix + "clock:version", Global: prefix + "clock:global",
		Clients: prefix + "clock:clients", Calls: prefix + "clock-call:",
	}
}

// CallMemory is how long Redis remembers a move, so that a move go-redis
// retries (it retries a command whose reply it did not get, and the first
// try has run) is made once: advancing twice would move the clock twice.
const CallMemory = 2 * time.Minute

// Redis is the Store of replicas sharing Redis. Each move and the version
// bump are one script that also reads the clock back, so this replica
// applies the move at once and every other replica reads it before its
// next request. Offsets are integers of nanoseconds moved with
// INCRBY/HINCRBY, so concurrent advances through different replicas add up.
type Redis struct {
	rdb    redis.UniversalClient
	keys   RedisKeys
	clocks *PerClient
}

// NewRedis returns the shared clock in rdb under keys, applied to clocks.
func NewRedis(rdb redis.UniversalClient, keys RedisKeys, clocks *PerClient) *Redis {
	return &Redis{rdb: rdb, keys: keys, clocks: clocks}
}

// moveScript makes one move, once per call id, bumps the version and
// answers the whole clock: {version, global, client, offset, ...}. KEYS:
// version, global, clients, call. ARGV: op (advance, set, reset, resetall),
// client id (” for the sandbox-wide clock), nanoseconds, call memory ms.
var moveScript = redis.NewScript(`
if redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[4]) then
  local op, id, ns = ARGV[1], ARGV[2], ARGV[3]
  if op == 'advance' then
    if id ~= '' then redis.call('HINCRBY', KEYS[3], id, ns) else redis.call('INCRBY', KEYS[2], ns) end
  elseif op == 'set' then
    if id ~= '' then redis.call('HSET', KEYS[3], id, ns) else redis.call('SET', KEYS[2], ns) end
  elseif op == 'reset' then
    if id ~= '' then redis.call('HDEL', KEYS[3], id) else redis.call('DEL', KEYS[2]) end
  else
    redis.call('DEL', KEYS[2], KEYS[3])
  end
  redis.call('INCR', KEYS[1])
end
local out = {redis.call('GET', KEYS[1]) or '0', redis.call('GET', KEYS[2]) or '0'}
for _, v in ipairs(redis.call('HGETALL', KEYS[3])) do out[#out+1] = v end
return out
`)

func (r *Redis) move(ctx context.Context, op, clientID string, ns int64) error {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("clock move id: %w", err)
	}
	res, err := moveScript.Run(ctx, r.rdb, []string{r.keys.Version, r.keys.Global, r.keys.Clients, r.keys.Calls + hex.EncodeToString(b)},
		op, clientID, ns, CallMemory.Milliseconds()).StringSlice()
	if err != nil {
		return fmt.Errorf("%s the shared clock: %w", op, err)
	}
	st, err := stateOf(res)
	if err != nil {
		return fmt.Errorf("%s the shared clock: read it back: %w", op, err)
	}
	r.clocks.Apply(st)
	return nil
}

// Advance moves a clock by d.
func (r *Redis) Advance(ctx context.Context, clientID string, d time.Duration) error {
	if err := r.clocks.CheckAdvance(clientID, d); err != nil {
		return err
	}
	return r.move(ctx, "advance", clientID, int64(d))
}

// Set puts a clock at t: the offset is computed on this replica's clock,
// just brought in step with the others, the sandbox-wide one from real
// time, a client's from the sandbox-wide time.
func (r *Redis) Set(ctx context.Context, clientID string, t time.Time) error {
	if err := r.clocks.CheckSet(clientID, t); err != nil {
		return err
	}
	global := r.clocks.Global()
	if clientID != "" {
		return r.move(ctx, "set", clientID, int64(t.Sub(global.Now())))
	}
	real := global.Now().Add(-global.Offset())
	return r.move(ctx, "set", "", int64(t.Sub(real)))
}

// Reset puts one clock back.
func (r *Redis) Reset(ctx context.Context, clientID string) error {
	return r.move(ctx, "reset", clientID, 0)
}

// ResetAll puts every clock back to real time.
func (r *Redis) ResetAll(ctx context.Context) error { return r.move(ctx, "resetall", "", 0) }

// Read reads the whole shared clock in one MULTI and applies it: a
// replica calls it when the version it read differs from its own.
func (r *Redis) Read(ctx context.Context) error {
	var version, global *redis.StringCmd
	var clients *redis.MapStringStringCmd
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		version, global, clients = p.Get(ctx, r.keys.Version), p.Get(ctx, r.keys.Global), p.HGetAll(ctx, r.keys.Clients)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) { // a missing key reads as zero
		return fmt.Errorf("read the shared clock: %w", err)
	}
	out := []string{orZero(version), orZero(global)}
	fields, err := clients.Result()
	if err != nil {
		return fmt.Errorf("read the shared clock: %w", err)
	}
	for id, v := range fields {
		out = append(out, id, v)
	}
	st, err := stateOf(out)
	if err != nil {
		return fmt.Errorf("read the shared clock: %w", err)
	}
	r.clocks.Apply(st)
	return nil
}

func orZero(cmd *redis.StringCmd) string {
	if v, err := cmd.Result(); err == nil {
		return v
	}
	return "0"
}

// stateOf decodes {version, global, client, offset, ...}.
func stateOf(v []string) (State, error) {
	if len(v) < 2 || len(v)%2 != 0 {
		return State{}, fmt.Errorf("%d values", len(v))
	}
	version, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return State{}, fmt.Errorf("version %q: %w", v[0], err)
	}
	global, err := strconv.ParseInt(v[1], 10, 64)
	if err != nil {
		return State{}, fmt.Errorf("global offset %q: %w", v[1], err)
	}
	st := State{Version: version, Global: time.Duration(global), Clients: make(map[string]time.Duration, len(v)/2-1)}
	for i := 2; i < len(v); i += 2 {
		ns, err := strconv.ParseInt(v[i+1], 10, 64)
		if err != nil {
			return State{}, fmt.Errorf("offset of client %s: %w", v[i], err)
		}
		st.Clients[v[i]] = time.Duration(ns)
	}
	return st, nil
}
