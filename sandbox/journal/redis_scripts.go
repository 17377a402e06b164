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
// step. What it keeps is what adding the entries one at a time, each
// dropping the oldest until it fits, would keep: the longest run of the
// newest entries (those kept before, then the batch's) within both bounds,
// and at least the newest. It works that run out first, from the batch's
// sizes, and then drops the oldest and adds the rest with a few variadic
// commands per batch (one XADD an entry): each call from Lua costs Redis
// more than the command itself, so calls per entry, not entries, are what
// the shared journal's cost grows with.
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
local function arg(k) return 3 + 3 * (k - 1) end
-- listFor is key's list in groups, made (and key added to order) the first time.
local function listFor(groups, order, key)
  if not groups[key] then groups[key] = {}; order[#order + 1] = key end
  return groups[key]
end
-- The batch's entries kept: from keepFrom to the last, keepN of them, keepB bytes.
local keepFrom, keepN, keepB = count, 1, tonumber(ARGV[arg(count)])
while keepFrom > 1 do
  local size = tonumber(ARGV[arg(keepFrom - 1)])
  if keepN >= maxN or keepB + size > maxB then break end
  keepFrom, keepN, keepB = keepFrom - 1, keepN + 1, keepB + size
end
-- Drop the oldest until the batch's kept entries fit (all of them when the
-- batch drops some of its own), deleting them chunk by chunk.
local function over() return n > 0 and (keepFrom > 1 or n + keepN > maxN or bytes + keepB > maxB) end
local dropped, ids, clients, byClient = 0, {}, {}, {}
local function deleteIDs()
  if #ids > 0 then redis.call('XDEL', KEYS[1], unpack(ids)) end
  ids = {}
end
while over() do
  local chunk = redis.call('ZRANGE', KEYS[4], dropped, dropped + 255)
  if #chunk == 0 then break end
  for _, m in ipairs(chunk) do
    if not over() then break end
    local seq, sz, c = string.match(m, '^(%d+):(%d+):(.*)$')
    ids[#ids + 1] = seq .. '-0'
    if c ~= '' then table.insert(listFor(byClient, clients, c), seq .. ':' .. sz) end
    bytes, n, dropped = bytes - tonumber(sz), n - 1, dropped + 1
  end
  deleteIDs()
end
if dropped > 0 then redis.call('ZREMRANGEBYRANK', KEYS[4], 0, dropped - 1) end
for _, c in ipairs(clients) do
  local members = byClient[c]
  for i = 1, #members, 256 do redis.call('ZREM', clientKey(c), unpack(members, i, math.min(i + 255, #members))) end
  if redis.call('ZCARD', clientKey(c)) == 0 then redis.call('SREM', KEYS[5], c) end
end
-- Add the kept entries: one XADD each, then the index and the clients' sets.
local index, added, addedTo = {}, {}, {}
for k = keepFrom, count do
  local a = arg(k)
  local seq, client = string.format('%d', first + k), ARGV[a + 1]
  redis.call('XADD', KEYS[1], seq .. '-0', 's', ARGV[a], 'c', client, 'e', ARGV[a + 2])
  index[#index + 1] = seq
  index[#index + 1] = seq .. ':' .. ARGV[a] .. ':' .. client
  if client ~= '' then
    local members = listFor(added, addedTo, client)
    members[#members + 1] = seq
    members[#members + 1] = seq .. ':' .. ARGV[a]
  end
end
redis.call('ZADD', KEYS[4], unpack(index))
for _, c in ipairs(addedTo) do redis.call('ZADD', clientKey(c), unpack(added[c])) end
if #addedTo > 0 then redis.call('SADD', KEYS[5], unpack(addedTo)) end
redis.call('SET', KEYS[3], string.format('%d', bytes + keepB))
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
