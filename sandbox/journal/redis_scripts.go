package journal

import "github.com/redis/go-redis/v9"

// addScript appends a batch of entries within both bounds, in one atomic
// step: for each, it drops the oldest entries (subtracting their recorded
// sizes from the byte total) until the new one fits, then numbers it from
// the sequence, which never goes back, so ids are never reused even after a
// Clear. The oldest entries are read and deleted in chunks (a full journal
// drops about one entry per entry added); the stream may hold more than the
// bounds only inside the script, which no reader sees.
//
// KEYS: stream, sequence, byte total. ARGV: max entries, max bytes, then
// for each entry its Size, its client id and its JSON. Returns the last id.
var addScript = redis.NewScript(`
local maxN, maxB = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = redis.call('XLEN', KEYS[1])
local bytes = tonumber(redis.call('GET', KEYS[3]) or '0')
if n == 0 then bytes = 0 end
local count = (#ARGV - 2) / 3
local first = redis.call('INCRBY', KEYS[2], count) - count
-- old: the oldest entries not yet dropped, read ahead; gone: ids to XDEL.
local old, at, gone, from = {}, 1, {}, '-'
local function dropOldest()
  if at > #old then
    if #gone > 0 then
      redis.call('XDEL', KEYS[1], unpack(gone))
      gone = {}
    end
    old = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', count + 16)
    at = 1
  end
  local e = old[at]
  if not e then -- cannot happen while XLEN counted n > 0
    n = 0
    return
  end
  at = at + 1
  from = '(' .. e[1]
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 's' then bytes = bytes - tonumber(f[i + 1]) end
  end
  gone[#gone + 1] = e[1]
  n = n - 1
end
for k = 0, count - 1 do
  local a = 3 + 3 * k
  local size = tonumber(ARGV[a])
  while n > 0 and (n >= maxN or bytes + size > maxB) do
    dropOldest()
  end
  redis.call('XADD', KEYS[1], string.format('%d-0', first + k + 1), 's', ARGV[a], 'c', ARGV[a + 1], 'e', ARGV[a + 2])
  n = n + 1
  bytes = bytes + size
end
if #gone > 0 then
  redis.call('XDEL', KEYS[1], unpack(gone))
end
redis.call('SET', KEYS[3], string.format('%d', bytes))
return first + count
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
