package store

import "github.com/redis/go-redis/v9"

// The Lua scripts of RedisStore. Each is atomic: Redis runs no other
// command while one runs, so a script's reads and writes are one
// transaction across replicas. KEYS[1] is the generation key, ARGV[1] the
// key prefix.

// luaBase finds the current generation's key base. Scripts that take an
// explicit generation (Reset building a new one) set gen before.
const luaBase = `
local P = ARGV[1]
local gen = redis.call('GET', KEYS[1]) or '0'
local base = P .. 'g' .. gen .. ':'
local function idOf(member) return string.match(member, '([^:]*)$') end
`

// writeScript loads records. ARGV: prefix, generation (” for the current
// one), escaped client to clear first (” for none), that client's id,
// what to do with a record whose key is taken ('0' overwrite, '1' refuse,
// '2' refuse unless it holds this record), then per record: kind (r or
// q), escaped client, escaped id, index member, client id, JSON, number
// of audit entries, the entries. It answers {'ok'} or {'conflict', key}
// having written nothing. With '2', records already stored byte for byte
// as given answer {'ok'} without a write: go-redis retries a script whose
// reply was lost, and the retry of a create that took effect must not
// answer the client that its own record conflicts, nor append its audit
// trail twice. A record and its trail carry the time and the request id
// of their submission, so two submissions are never byte-identical.
var writeScript = redis.NewScript(luaBase + `
if ARGV[2] ~= '' then base = P .. 'g' .. ARGV[2] .. ':' end
local function each(f)
  local i = 6
  while i <= #ARGV do
    local n = tonumber(ARGV[i+6])
    f(ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5], i+7, n)
    i = i + 7 + n
  end
end
if ARGV[5] ~= '0' then
  local function sameTrail(a, first, n)
    local held = redis.call('LRANGE', a, 0, -1)
    if #held ~= n then return false end
    for j = 0, n - 1 do if held[j + 1] ~= ARGV[first + j] then return false end end
    return true
  end
  local conflict, same, count = nil, 0, 0
  each(function(kind, ec, eid, member, client, json, first, n)
    local key = base .. kind .. ':' .. ec .. ':' .. eid
    count = count + 1
    local held = redis.call('GET', key)
    if held == json and ARGV[5] == '2' and sameTrail(base .. 'a:' .. ec .. ':' .. eid, first, n) then same = same + 1
    elseif conflict == nil and held then conflict = key end
  end)
  if ARGV[5] == '2' and conflict == nil and same == count then return {'ok'} end
  if conflict then return {'conflict', conflict} end
  if same > 0 then return {'conflict', 'partly written'} end
end
local ec0 = ARGV[3]
if ec0 ~= '' then
  for _, kind in ipairs({'r', 'q'}) do
    local idx = base .. kind .. 'i:' .. ec0
    for _, m in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
      local eid = idOf(m)
      redis.call('DEL', base .. kind .. ':' .. ec0 .. ':' .. eid)
      if kind == 'r' then
        redis.call('ZREM', base .. 'rid:' .. eid, ec0)
      else
        redis.call('DEL', base .. 'a:' .. ec0 .. ':' .. eid)
      end
    end
    redis.call('DEL', idx)
  end
  redis.call('SREM', base .. 'clients', ARGV[4])
end
each(function(kind, ec, eid, member, client, json, first, n)
  redis.call('SET', base .. kind .. ':' .. ec .. ':' .. eid, json)
  redis.call('ZADD', base .. kind .. 'i:' .. ec, 0, member)
  redis.call('SADD', base .. 'clients', client)
  if kind == 'r' then redis.call('ZADD', base .. 'rid:' .. eid, 0, ec) end
  local a = base .. 'a:' .. ec .. ':' .. eid
  for j = first, first + n - 1 do redis.call('RPUSH', a, ARGV[j]) end
end)
return {'ok'}
`)

// getScript reads one record. ARGV: prefix, kind, escaped client, escaped
// id, audit entry to append (” for none), how many newest entries to
// return. It answers nil when there is no such record, else {generation,
// JSON} for a referral and {generation, JSON, trail length, newest
// entries...} for a qualified referral.
var getScript = redis.NewScript(luaBase + `
local kind, ec, eid = ARGV[2], ARGV[3], ARGV[4]
local v = redis.call('GET', base .. kind .. ':' .. ec .. ':' .. eid)
if not v then return false end
if kind == 'r' then return {gen, v} end
local a = base .. 'a:' .. ec .. ':' .. eid
if ARGV[5] ~= '' then redis.call('RPUSH', a, ARGV[5]) end
local out = {gen, v, redis.call('LLEN', a)}
for _, e in ipairs(redis.call('LRANGE', a, -tonumber(ARGV[6]), -1)) do out[#out+1] = e end
return out
`)

// listScript reads one page. ARGV: prefix, kind, escaped client, the
// ZREVRANGEBYLEX max ('+' or '(' and the cursor's member), page limit,
// audit entry to append to each returned record (” for none), how many
// newest entries to return. It reads limit+1 members, the extra one only
// telling whether a next page exists (it gets no view), and answers one
// flat array with, per member: the member, the JSON, the trail's length,
// the number n of entries that follow, then those n entries (length and n
// are 0 for referrals and for the extra member).
var listScript = redis.NewScript(luaBase + `
local kind, ec, limit = ARGV[2], ARGV[3], tonumber(ARGV[5])
local members = redis.call('ZREVRANGEBYLEX', base .. kind .. 'i:' .. ec, ARGV[4], '-', 'LIMIT', 0, limit + 1)
local out = {}
for i, m in ipairs(members) do
  local eid = idOf(m)
  out[#out+1] = m
  out[#out+1] = redis.call('GET', base .. kind .. ':' .. ec .. ':' .. eid) or ''
  if kind == 'q' and i <= limit then
    local a = base .. 'a:' .. ec .. ':' .. eid
    if ARGV[6] ~= '' then redis.call('RPUSH', a, ARGV[6]) end
    out[#out+1] = redis.call('LLEN', a)
    local trail = redis.call('LRANGE', a, -tonumber(ARGV[7]), -1)
    out[#out+1] = #trail
    for _, e in ipairs(trail) do out[#out+1] = e end
  else
    out[#out+1] = 0
    out[#out+1] = 0
  end
end
return out
`)

// auditScript reads a page of a qualified referral's trail. ARGV: prefix,
// escaped client, escaped id, index of the first entry, how many. nil when
// there is no such record.
var auditScript = redis.NewScript(luaBase + `
local ec, eid = ARGV[2], ARGV[3]
if redis.call('EXISTS', base .. 'q:' .. ec .. ':' .. eid) == 0 then return false end
local first = tonumber(ARGV[4])
return redis.call('LRANGE', base .. 'a:' .. ec .. ':' .. eid, first, first + tonumber(ARGV[5]) - 1)
`)

// findScript is the admin lookup. ARGV: prefix, escaped id. It answers the
// referral of the smallest escaped client holding the id, nil without one.
var findScript = redis.NewScript(luaBase + `
local ec = redis.call('ZRANGE', base .. 'rid:' .. ARGV[2], 0, 0)[1]
if not ec then return false end
return redis.call('GET', base .. 'r:' .. ec .. ':' .. ARGV[2])
`)

// casScript commits an update. ARGV: prefix, generation read, kind,
// escaped client, escaped id, JSON read, new JSON, member read, new
// member, trail length read ('-1' for a referral), entries to append. It
// answers 'ok', 'retry' when the generation, the record or its trail
// changed since the read, or 'notfound'.
var casScript = redis.NewScript(luaBase + `
if gen ~= ARGV[2] then return 'retry' end
local kind, ec, eid = ARGV[3], ARGV[4], ARGV[5]
local key = base .. kind .. ':' .. ec .. ':' .. eid
local v = redis.call('GET', key)
if not v then return 'notfound' end
if v ~= ARGV[6] then return 'retry' end
local a = base .. 'a:' .. ec .. ':' .. eid
if ARGV[10] ~= '-1' and redis.call('LLEN', a) ~= tonumber(ARGV[10]) then return 'retry' end
if ARGV[7] ~= ARGV[6] then redis.call('SET', key, ARGV[7]) end
if ARGV[8] ~= ARGV[9] then
  local idx = base .. kind .. 'i:' .. ec
  redis.call('ZREM', idx, ARGV[8])
  redis.call('ZADD', idx, 0, ARGV[9])
end
for j = 11, #ARGV do redis.call('RPUSH', a, ARGV[j]) end
return 'ok'
`)

// clientsScript answers the client ids owning a record.
var clientsScript = redis.NewScript(luaBase + `return redis.call('SMEMBERS', base .. 'clients')`)

// runtimeClientScript stores (ARGV: prefix, 'put', escaped id, JSON),
// deletes (prefix, 'del', escaped id) or lists (prefix, 'all': field,
// value, ...) runtime clients.
var runtimeClientScript = redis.NewScript(luaBase + `
local h = base .. 'rc'
if ARGV[2] == 'put' then return redis.call('HSET', h, ARGV[3], ARGV[4]) end
if ARGV[2] == 'del' then return redis.call('HDEL', h, ARGV[3]) end
return redis.call('HGETALL', h)
`)

// beginGenerationScript starts building a new generation for Reset: it
// takes the next generation number and registers it, with Redis's time,
// among those being built, which open leaves alone for a while. ARGV:
// prefix.
var beginGenerationScript = redis.NewScript(`
local P = ARGV[1]
local g = redis.call('INCR', P .. 'nextgen')
local now = redis.call('TIME')
redis.call('ZADD', P .. 'building', now[1], g)
return g
`)

// flipGenerationScript makes a built generation current and answers the
// one it replaces. ARGV: prefix, new generation.
var flipGenerationScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZREM', ARGV[1] .. 'building', ARGV[2])
return old
`)

// generationsScript answers the current generation, Redis's time in
// seconds, then the generations being built with their start times.
var generationsScript = redis.NewScript(`
local out = {redis.call('GET', KEYS[1]) or '0', redis.call('TIME')[1]}
for _, v in ipairs(redis.call('ZRANGE', ARGV[1] .. 'building', 0, -1, 'WITHSCORES')) do out[#out+1] = v end
return out
`)
