package journal

import "github.com/redis/go-redis/v9"

// addScript appends a batch of entries within both bounds, in one atomic
// step: for each, it drops the oldest entries until the new one fits, then
// numbers it from the sequence, which never goes back, so ids are never
// reused even after a Clear.
//
// The entries' sizes are kept apart, oldest first, in a list beside the
// stream, so that dropping the oldest reads a few small numbers instead of
// whole entries: a full journal drops about one entry per entry added. The
// drops are applied at the end, with one LTRIM and one XTRIM; the stream
// holds more than its bounds only inside the script, which no reader sees.
// A list out of step with the stream (none yet, or after clearClientScript)
// is rebuilt from the entries' own sizes first.
//
// KEYS: stream, sequence, byte total, sizes. ARGV: max entries, max bytes,
// then for each entry its Size, its client id and its JSON. Returns the
// last id.
var addScript = redis.NewScript(`
local maxN, maxB = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = redis.call('XLEN', KEYS[1])
if redis.call('LLEN', KEYS[4]) ~= n then
  redis.call('DEL', KEYS[4])
  local total, from = 0, '-'
  while true do
    local chunk = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 1000)
    if #chunk == 0 then break end
    local sizes = {}
    for _, e in ipairs(chunk) do
      local f, size = e[2], 0
      for i = 1, #f, 2 do
        if f[i] == 's' then size = tonumber(f[i + 1]) end
      end
      sizes[#sizes + 1] = size
      total = total + size
    end
    redis.call('RPUSH', KEYS[4], unpack(sizes))
    from = '(' .. chunk[#chunk][1]
  end
  redis.call('SET', KEYS[3], string.format('%d', total))
end
local bytes = tonumber(redis.call('GET', KEYS[3]) or '0')
if n == 0 then bytes = 0 end
local stored = n
local count = (#ARGV - 2) / 3
local first = redis.call('INCRBY', KEYS[2], count) - count
-- Dropping goes through the stored entries' sizes (read ahead from the
-- list), then through this batch's own.
local old, at, dropped = {}, 1, 0
local added, addedDropped = {}, 0
for k = 0, count - 1 do
  local a = 3 + 3 * k
  local size = tonumber(ARGV[a])
  while n > 0 and (n >= maxN or bytes + size > maxB) do
    if dropped < stored then
      if at > #old then
        old = redis.call('LRANGE', KEYS[4], dropped, dropped + count + 15)
        at = 1
      end
      bytes = bytes - tonumber(old[at])
      at, dropped = at + 1, dropped + 1
    else
      addedDropped = addedDropped + 1
      bytes = bytes - added[addedDropped]
    end
    n = n - 1
  end
  redis.call('XADD', KEYS[1], string.format('%d-0', first + k + 1), 's', ARGV[a], 'c', ARGV[a + 1], 'e', ARGV[a + 2])
  added[#added + 1] = size
  n = n + 1
  bytes = bytes + size
end
if dropped > 0 then
  redis.call('LTRIM', KEYS[4], dropped, -1)
end
if addedDropped < #added then
  redis.call('RPUSH', KEYS[4], unpack(added, addedDropped + 1))
end
redis.call('XTRIM', KEYS[1], 'MAXLEN', n)
redis.call('SET', KEYS[3], string.format('%d', bytes))
return first + count
`)

// clearClientScript deletes one client's entries from the stream and their
// sizes from the byte total, atomically, keeping every other entry and id.
// It drops the list of sizes, which addScript rebuilds from the stream.
//
// KEYS: stream, byte total, sizes. ARGV: client id.
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
redis.call('DEL', KEYS[3])
return 0
`)
