package journal

import "github.com/redis/go-redis/v9"

// addScript appends one entry to the stream within both bounds, in one
// atomic step: it drops the oldest entries (subtracting their recorded
// sizes from the byte total) until the new one fits, then numbers it from
// the sequence, which never goes back, so ids are never reused even after a
// Clear. MAXLEN on XADD is a guard only: the loop has already made room.
//
// KEYS: stream, sequence, byte total. ARGV: max entries, max bytes, the
// entry's Size, its client id, its JSON. Returns the entry's id.
var addScript = redis.NewScript(`
local maxN, maxB, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local n = redis.call('XLEN', KEYS[1])
local bytes = tonumber(redis.call('GET', KEYS[3]) or '0')
if n == 0 then bytes = 0 end
while n > 0 and (n >= maxN or bytes + size > maxB) do
  local old = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  local f = old[2]
  for i = 1, #f, 2 do
    if f[i] == 's' then bytes = bytes - tonumber(f[i + 1]) end
  end
  redis.call('XDEL', KEYS[1], old[1])
  n = n - 1
end
local id = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', maxN, string.format('%d-0', id), 's', ARGV[3], 'c', ARGV[4], 'e', ARGV[5])
redis.call('SET', KEYS[3], string.format('%d', bytes + size))
return id
`)

// clearClientScript deletes one client's entries from the stream and their
// sizes from the byte total, atomically, keeping every other entry and id.
//
// KEYS: stream, byte total. ARGV: client id.
var clearClientScript = redis.NewScript(`
local bytes = tonumber(redis.call('GET', KEYS[2]) or '0')
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f, client, size = e[2], nil, 0
  for i = 1, #f, 2 do
    if f[i] == 'c' then client = f[i + 1] elseif f[i] == 's' then size = tonumber(f[i + 1]) end
  end
  if client == ARGV[1] then
    redis.call('XDEL', KEYS[1], e[1])
    bytes = bytes - size
  end
end
redis.call('SET', KEYS[2], string.format('%d', bytes))
return 0
`)
