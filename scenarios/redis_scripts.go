package scenarios

import "github.com/redis/go-redis/v9"

// fireScript counts one match of a rule and decides, atomically, whether it
// fires: the after/times/per-client tallies and the seeded probability draw
// (the same number probabilityDraw computes in Go) are read and updated in
// one step, so concurrent replicas never both take the last of a rule's
// times. A non-per-client rule whose times are used up retires in the same
// step, bumping the version so every replica's cached list refreshes.
//
// It takes effect once per call id: its decision is recorded under the call
// key (for ARGV[9] milliseconds), and a second run with the same key, which
// is go-redis sending the command again after a read timed out, returns
// that decision and counts nothing. That second run renews the call key,
// a write: with --redis-wait the WAIT after it, on whatever connection,
// then also covers the first run's decision, which replicas apply before.
//
// KEYS: defs hash, order list, version, the rule's counters hash, the call
// key. ARGV: id, client id, after, times, perClient (1/0), probability,
// seed, now (unix nanoseconds), call ttl (ms). Returns {-1, 0} when the rule
// is gone, {0, match} when it did not fire, {1, match} when it fired; match
// is the rule's match count.
var fireScript = redis.NewScript(`
local done = redis.call('GET', KEYS[5])
if done then
  redis.call('PEXPIRE', KEYS[5], ARGV[9])
  local fired, m = string.match(done, '^(%-?%d+):(%d+)$')
  return {tonumber(fired), tonumber(m)}
end
local function decided(fired, m)
  redis.call('SET', KEYS[5], string.format('%d:%d', fired, m), 'PX', ARGV[9])
  return {fired, m}
end
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], id) == 0 then return {-1, 0} end
local m = redis.call('HINCRBY', KEYS[4], 'm', 1)
local perClient = ARGV[5] == '1'
local cm, hf = m, 'h'
if perClient then
  cm = redis.call('HINCRBY', KEYS[4], 'm:' .. ARGV[2], 1)
  hf = 'h:' .. ARGV[2]
end
local hits = tonumber(redis.call('HGET', KEYS[4], hf) or '0')
local after, times = tonumber(ARGV[3]), tonumber(ARGV[4])
if cm <= after then return decided(0, m) end
if times > 0 and hits >= times then return decided(0, m) end
local p = tonumber(ARGV[6])
if p > 0 and p < 1 then
  local h = redis.sha1hex(ARGV[7] .. ':' .. string.format('%d', m))
  local x = tonumber(string.sub(h, 1, 13), 16) / 4503599627370496
  if x >= p then return decided(0, m) end
end
redis.call('HINCRBY', KEYS[4], 'h', 1)
if perClient then redis.call('HINCRBY', KEYS[4], hf, 1) end
redis.call('HSET', KEYS[4], 'last', ARGV[8])
if not perClient and times > 0 and hits + 1 >= times then
  redis.call('LREM', KEYS[2], 1, id)
  redis.call('HDEL', KEYS[1], id)
  redis.call('DEL', KEYS[4])
  redis.call('INCR', KEYS[3])
end
return decided(1, m)
`)
