package journal

import "github.com/redis/go-redis/v9"

// The shared journal's layout in Redis, under the journal's keys:
//
//   - the stream: one message per entry, id "<seq>-0", fields s (Size),
//     c (client id) and e (the entry's JSON);
//   - the sequence, which never goes back, so ids are never reused even
//     after a Clear, and the byte total of the entries kept;
//   - the index: a sorted set, by seq, of "<seq>:<size>:<client id>", one
//     member per kept entry. Dropping the oldest entries reads it, a few
//     small members, instead of whole entries;
//   - per client id, a sorted set, by seq, of "<seq>:<size>": that client's
//     entries (key: the clients key, ":", the client id), and the set of
//     the client ids that have one (the clients key itself). Clearing a
//     client reads its own set only, so its cost grows with that client's
//     entries, never with the journal.
//
// Every script takes KEYS: stream, sequence, byte total, index, clients,
// and the list of sizes that the index replaced. A journal written before
// the index existed (its index size differs from the stream's length) has
// the index rebuilt from the stream once, by the next append, which deletes
// that list.

// addScript appends a batch of entries within both bounds, in one atomic
// step: for each, it drops the oldest entries until the new one fits, then
// numbers it from the sequence.
//
// ARGV: max entries, max bytes, then for each entry its Size, its client
// id and its JSON. Returns the last id.
var addScript = redis.NewScript(`
local maxN, maxB = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = redis.call('XLEN', KEYS[1])
local function clientKey(c) return KEYS[5] .. ':' .. c end
if redis.call('ZCARD', KEYS[4]) ~= n then
  redis.call('DEL', KEYS[4], KEYS[6])
  for _, c in ipairs(redis.call('SMEMBERS', KEYS[5])) do redis.call('DEL', clientKey(c)) end
  redis.call('DEL', KEYS[5])
  local total, from = 0, '-'
  while true do
    local chunk = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', 1000)
    if #chunk == 0 then break end
    for _, e in ipairs(chunk) do
      local f, size, client = e[2], 0, ''
      for i = 1, #f, 2 do
        if f[i] == 's' then size = tonumber(f[i + 1]) elseif f[i] == 'c' then client = f[i + 1] end
      end
      local seq = string.match(e[1], '^(%d+)')
      redis.call('ZADD', KEYS[4], seq, seq .. ':' .. size .. ':' .. client)
      if client ~= '' then
        redis.call('ZADD', clientKey(client), seq, seq .. ':' .. size)
        redis.call('SADD', KEYS[5], client)
      end
      total = total + size
    end
    from = '(' .. chunk[#chunk][1]
  end
  redis.call('SET', KEYS[3], string.format('%d', total))
end
local bytes = tonumber(redis.call('GET', KEYS[3]) or '0')
if n == 0 then bytes = 0 end
local count = (#ARGV - 2) / 3
local first = redis.call('INCRBY', KEYS[2], count) - count
for k = 0, count - 1 do
  local a = 3 + 3 * k
  local size, client = tonumber(ARGV[a]), ARGV[a + 1]
  while n > 0 and (n >= maxN or bytes + size > maxB) do
    local oldest = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
    local seq, sz, c = string.match(oldest, '^(%d+):(%d+):(.*)$')
    redis.call('ZREMRANGEBYRANK', KEYS[4], 0, 0)
    redis.call('XDEL', KEYS[1], seq .. '-0')
    if c ~= '' then
      redis.call('ZREM', clientKey(c), seq .. ':' .. sz)
      if redis.call('ZCARD', clientKey(c)) == 0 then redis.call('SREM', KEYS[5], c) end
    end
    bytes = bytes - tonumber(sz)
    n = n - 1
  end
  local seq = string.format('%d', first + k + 1)
  redis.call('XADD', KEYS[1], seq .. '-0', 's', ARGV[a], 'c', client, 'e', ARGV[a + 2])
  redis.call('ZADD', KEYS[4], seq, seq .. ':' .. ARGV[a] .. ':' .. client)
  if client ~= '' then
    redis.call('ZADD', clientKey(client), seq, seq .. ':' .. ARGV[a])
    redis.call('SADD', KEYS[5], client)
  end
  n = n + 1
  bytes = bytes + size
end
redis.call('SET', KEYS[3], string.format('%d', bytes))
return first + count
`)

// clearScript empties the journal: the stream, the index and every
// client's set. The sequence stays.
var clearScript = redis.NewScript(`
for _, c in ipairs(redis.call('SMEMBERS', KEYS[5])) do redis.call('DEL', KEYS[5] .. ':' .. c) end
redis.call('DEL', KEYS[1], KEYS[4], KEYS[5])
redis.call('SET', KEYS[3], '0')
return 0
`)

// clearClientScript deletes one client's entries from the stream, the index
// and the byte total, atomically, keeping every other entry and id. It
// reads that client's set only.
//
// ARGV: client id.
var clearClientScript = redis.NewScript(`
local ck = KEYS[5] .. ':' .. ARGV[1]
local bytes = tonumber(redis.call('GET', KEYS[3]) or '0')
for _, m in ipairs(redis.call('ZRANGE', ck, 0, -1)) do
  local seq, sz = string.match(m, '^(%d+):(%d+)$')
  redis.call('XDEL', KEYS[1], seq .. '-0')
  redis.call('ZREM', KEYS[4], m .. ':' .. ARGV[1])
  bytes = bytes - tonumber(sz)
end
redis.call('DEL', ck)
redis.call('SREM', KEYS[5], ARGV[1])
redis.call('SET', KEYS[3], string.format('%d', bytes))
return 0
`)
