package store

import "github.com/redis/go-redis/v9"

// The Lua scripts of RedisStore. Each is atomic: Redis runs no other
// command while one runs, so a script's reads and writes are one
// transaction across replicas. Each touches one slot only: a client
// script (run with runClient) has the client's generation key as KEYS[1]
// and the client's key prefix as ARGV[1]; a global script (run with run)
// has the global generation key and the global keys' prefix.

// luaClient finds the client's generation and its key base. A client
// without a generation key holds no record (its base names no key).
const luaClient = `
local C = ARGV[1]
local gen = redis.call('GET', KEYS[1]) or '0'
local base = C .. 'g' .. gen .. ':'
local function idOf(member) return string.match(member, '([^:]*)$') end
` + luaQuota

// luaQuota keeps the client's usage for its quota (see Quota) in the hash
// <base>u of its generation: n records, b bytes (each record's JSON and
// listing member, each audit entry's JSON). A Reset's new generation and a
// client reset start it afresh with the records they load. refusal
// answers the error reply a write that grows the usage by dn records and
// db bytes gets beyond the limits qn and qb (0: none), or nil; charge
// adds the growth. A script checks before its first write: Redis does not
// undo what a script wrote before an error.
const luaQuota = `
local function refusal(base, dn, db, qn, qb)
  local held = redis.call('HMGET', base .. 'u', 'n', 'b')
  local n, b = tonumber(held[1] or '0'), tonumber(held[2] or '0')
  if qn > 0 and dn > 0 and n + dn > qn then
    return redis.error_reply('QUOTA the client would hold ' .. (n + dn) .. ' records, its quota is ' .. qn)
  end
  if qb > 0 and db > 0 and b + db > qb then
    return redis.error_reply('QUOTA the client would hold ' .. string.format('%d', b + db) .. ' bytes, its quota is ' .. string.format('%d', qb))
  end
  return nil
end
local function charge(base, dn, db)
  if dn ~= 0 then redis.call('HINCRBY', base .. 'u', 'n', dn) end
  if db ~= 0 then redis.call('HINCRBY', base .. 'u', 'b', db) end
end
` + luaInOrder

// luaInOrder keeps a trail's times in its order, as the embedded store's
// appendInOrder does: after(prev, e) is the audit entry JSON e, its at
// raised to that of prev (the entry before it, false for none) when
// earlier. Canonical times have one width, so they compare as strings and
// the entry keeps its length (what the quota counted).
const luaInOrder = `
local function after(prev, e)
  if not prev then return e end
  local p = string.match(prev, '^{"at":"([^"]*)"')
  local t = string.match(e, '^{"at":"([^"]*)"')
  if p and t and #p == #t and p > t then return '{"at":"' .. p .. string.sub(e, 8 + #t) end
  return e
end
`

// writeScript loads records of one client. ARGV: client prefix,
// generation (” for the client's current one), '1' to clear the client's
// records first, what to do with a record whose key is taken ('0'
// overwrite, '1' refuse, '2' refuse unless it holds this record, '3'
// check as '1' and write nothing), the generation whose clients set
// registerScript just added the client to (” for none), the quota's
// records and bytes, then per record:
// kind (r or q), escaped id, index member, JSON, number of audit entries,
// the entries. It answers {'ok'}, {'conflict', key} having written
// nothing, or {'register'} having written nothing: the client must first
// be added to the global clients set, whose generation the next call
// passes.
//
// A client is listed (its 'listed' key equals its generation) when the
// clients set of its generation holds it; it holds no record in its
// generation otherwise (a flip that leaves it out of the new set also
// unlists it). So a write to an unlisted client may move it to the
// registered generation, if newer, with nothing to carry over.
//
// The quota (ARGV[6] records, ARGV[7] bytes, '0' for none; see luaQuota)
// is checked after the conflicts, so a refused write answers the quota
// error having written nothing. A client reset ('1') is not checked.
//
// With '2', records already stored byte for byte as given answer {'ok'}
// without a write: go-redis retries a script whose reply was lost, and
// the retry of a create that took effect must not answer the client that
// its own record conflicts, nor append its audit trail twice. A record and
// its trail carry the time and the request id of their submission, so two
// submissions are never byte-identical.
var writeScript = redis.NewScript(luaQuota + `
local C, mode = ARGV[1], ARGV[4]
local function idOf(member) return string.match(member, '([^:]*)$') end
local gen, moved = nil, false
if ARGV[2] ~= '' then
  gen = ARGV[2]
else
  local m = redis.call('GET', KEYS[1])
  if mode == '3' or #ARGV < 8 then
    if not m then return {'ok'} end
    gen = m
  elseif m and redis.call('GET', C .. 'listed') == m then
    gen = m
  else
    local x = ARGV[5]
    if x == '' or (m and tonumber(x) < tonumber(m)) then return {'register'} end
    gen, moved = x, true
  end
end
local base = C .. 'g' .. gen .. ':'
local function each(f)
  local i = 8
  while i <= #ARGV do
    local n = tonumber(ARGV[i+4])
    f(ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3], i+5, n)
    i = i + 5 + n
  end
end
if mode ~= '0' then
  local function sameTrail(a, first, n)
    local held = redis.call('LRANGE', a, 0, -1)
    if #held ~= n then return false end
    for j = 0, n - 1 do if held[j + 1] ~= ARGV[first + j] then return false end end
    return true
  end
  local conflict, same, count = nil, 0, 0
  each(function(kind, eid, member, json, first, n)
    local key = base .. kind .. ':' .. eid
    count = count + 1
    local held = redis.call('GET', key)
    if held == json and mode == '2' and sameTrail(base .. 'a:' .. eid, first, n) then same = same + 1
    elseif conflict == nil and held then conflict = key end
  end)
  if mode == '2' and conflict == nil and same == count then return {'ok'} end
  if conflict then return {'conflict', conflict} end
  if same > 0 then return {'conflict', 'partly written'} end
  if mode == '3' then return {'ok'} end
end
local dn, db = 0, 0
each(function(kind, eid, member, json, first, n)
  local held = nil
  if ARGV[3] ~= '1' then held = redis.call('GET', base .. kind .. ':' .. eid) end
  if held then db = db + #json - #held else dn, db = dn + 1, db + #json + #member end
  for j = first, first + n - 1 do db = db + #ARGV[j] end
end)
if ARGV[3] ~= '1' then
  local refused = refusal(base, dn, db, tonumber(ARGV[6]), tonumber(ARGV[7]))
  if refused then return refused end
end
if moved then
  redis.call('SET', KEYS[1], gen)
  redis.call('SET', C .. 'listed', gen)
end
if ARGV[3] == '1' then
  redis.call('DEL', base .. 'u')
  for _, kind in ipairs({'r', 'q'}) do
    local idx = base .. kind .. 'i'
    for _, m in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
      local eid = idOf(m)
      redis.call('DEL', base .. kind .. ':' .. eid)
      if kind == 'q' then redis.call('DEL', base .. 'a:' .. eid) end
    end
    redis.call('DEL', idx)
  end
end
each(function(kind, eid, member, json, first, n)
  redis.call('SET', base .. kind .. ':' .. eid, json)
  redis.call('ZADD', base .. kind .. 'i', 0, member)
  local a = base .. 'a:' .. eid
  for j = first, first + n - 1 do redis.call('RPUSH', a, ARGV[j]) end
end)
charge(base, dn, db)
return {'ok'}
`)

// registerScript adds a client (ARGV: global prefix, client id) to the
// clients set of the current generation and answers that generation; while
// a flip is in progress, to the flip's set and its new generation's set
// too, answering the new generation, so that the flip moves the client
// along with the rest.
var registerScript = redis.NewScript(`
local G = ARGV[1]
local cur = redis.call('GET', KEYS[1]) or '0'
redis.call('SADD', G .. 'g' .. cur .. ':clients', ARGV[2])
local f = redis.call('HGET', G .. 'flip', 'new')
if not f then return cur end
redis.call('SADD', G .. 'flipset', ARGV[2])
redis.call('SADD', G .. 'g' .. f .. ':clients', ARGV[2])
return f
`)

// getScript reads one record. ARGV: client prefix, kind, escaped id,
// audit entry to append (” for none), how many newest entries to return,
// the quota's records and bytes (an entry beyond it is refused).
// It answers nil when there is no such record, else {generation, JSON} for
// a referral and {generation, JSON, trail length, newest entries...} for a
// qualified referral.
var getScript = redis.NewScript(luaClient + `
local kind, eid = ARGV[2], ARGV[3]
local v = redis.call('GET', base .. kind .. ':' .. eid)
if not v then return false end
if kind == 'r' then return {gen, v} end
local a = base .. 'a:' .. eid
if ARGV[4] ~= '' then
  local refused = refusal(base, 0, #ARGV[4], tonumber(ARGV[6]), tonumber(ARGV[7]))
  if refused then return refused end
  redis.call('RPUSH', a, after(redis.call('LINDEX', a, -1), ARGV[4]))
  charge(base, 0, #ARGV[4])
end
local out = {gen, v, redis.call('LLEN', a)}
for _, e in ipairs(redis.call('LRANGE', a, -tonumber(ARGV[5]), -1)) do out[#out+1] = e end
return out
`)

// listScript reads one page. ARGV: client prefix, kind, the
// ZREVRANGEBYLEX max ('+' or '(' and the cursor's member), page limit,
// audit entry to append to each returned record (” for none), how many
// newest entries to return, the quota's records and bytes (entries beyond
// it refuse the whole page). It reads limit+1 members, the extra one only
// telling whether a next page exists (it gets no view), and answers one
// flat array with, per member: the member, the JSON, the trail's length,
// the number n of entries that follow, then those n entries (length and n
// are 0 for referrals and for the extra member).
var listScript = redis.NewScript(luaClient + `
local kind, limit = ARGV[2], tonumber(ARGV[4])
local members = redis.call('ZREVRANGEBYLEX', base .. kind .. 'i', ARGV[3], '-', 'LIMIT', 0, limit + 1)
if kind == 'q' and ARGV[5] ~= '' then
  local db = math.min(#members, limit) * #ARGV[5]
  local refused = refusal(base, 0, db, tonumber(ARGV[7]), tonumber(ARGV[8]))
  if refused then return refused end
  charge(base, 0, db)
end
local out = {}
for i, m in ipairs(members) do
  local eid = idOf(m)
  out[#out+1] = m
  out[#out+1] = redis.call('GET', base .. kind .. ':' .. eid) or ''
  if kind == 'q' and i <= limit then
    local a = base .. 'a:' .. eid
    if ARGV[5] ~= '' then redis.call('RPUSH', a, after(redis.call('LINDEX', a, -1), ARGV[5])) end
    out[#out+1] = redis.call('LLEN', a)
    local trail = redis.call('LRANGE', a, -tonumber(ARGV[6]), -1)
    out[#out+1] = #trail
    for _, e in ipairs(trail) do out[#out+1] = e end
  else
    out[#out+1] = 0
    out[#out+1] = 0
  end
end
return out
`)

// auditScript reads a page of a qualified referral's trail. ARGV: client
// prefix, escaped id, index of the first entry, how many. nil when there
// is no such record.
var auditScript = redis.NewScript(luaClient + `
local eid = ARGV[2]
if redis.call('EXISTS', base .. 'q:' .. eid) == 0 then return false end
local first = tonumber(ARGV[3])
return redis.call('LRANGE', base .. 'a:' .. eid, first, first + tonumber(ARGV[4]) - 1)
`)

// findScript answers the client's referral with an id (ARGV: client
// prefix, escaped id), "" without one: FindReferral asks each client.
var findScript = redis.NewScript(luaClient + `
return redis.call('GET', base .. 'r:' .. ARGV[2]) or ''
`)

// ownsScript answers how many records the client holds (ARGV: client
// prefix).
var ownsScript = redis.NewScript(luaClient + `
return redis.call('ZCARD', base .. 'ri') + redis.call('ZCARD', base .. 'qi')
`)

// casScript commits an update. ARGV: client prefix, generation read, kind,
// escaped id, JSON read, new JSON, member read, new member, trail length
// read ('-1' for a referral), the quota's records and bytes, entries to
// append. It answers 'ok', 'retry'
// when the client's generation, the record or its trail changed since the
// read, or 'notfound'.
var casScript = redis.NewScript(luaClient + `
if gen ~= ARGV[2] then return 'retry' end
local kind, eid = ARGV[3], ARGV[4]
local key = base .. kind .. ':' .. eid
local v = redis.call('GET', key)
if not v then return 'notfound' end
if v ~= ARGV[5] then return 'retry' end
local a = base .. 'a:' .. eid
if ARGV[9] ~= '-1' and redis.call('LLEN', a) ~= tonumber(ARGV[9]) then return 'retry' end
local db = #ARGV[6] - #ARGV[5] + #ARGV[8] - #ARGV[7]
for j = 12, #ARGV do db = db + #ARGV[j] end
local refused = refusal(base, 0, db, tonumber(ARGV[10]), tonumber(ARGV[11]))
if refused then return refused end
charge(base, 0, db)
if ARGV[6] ~= ARGV[5] then redis.call('SET', key, ARGV[6]) end
if ARGV[7] ~= ARGV[8] then
  local idx = base .. kind .. 'i'
  redis.call('ZREM', idx, ARGV[7])
  redis.call('ZADD', idx, 0, ARGV[8])
end
for j = 12, #ARGV do redis.call('RPUSH', a, ARGV[j]) end
return 'ok'
`)

// luaGlobal finds the current generation's global key base.
const luaGlobal = `
local G = ARGV[1]
local gen = redis.call('GET', KEYS[1]) or '0'
local base = G .. 'g' .. gen .. ':'
`

// clientsScript answers the client ids that may own a record.
var clientsScript = redis.NewScript(luaGlobal + `return redis.call('SMEMBERS', base .. 'clients')`)

// runtimeClientScript stores (ARGV: global prefix, 'put', escaped id,
// JSON), deletes (prefix, 'del', escaped id) or lists (prefix, 'all':
// field, value, ...) runtime clients.
var runtimeClientScript = redis.NewScript(luaGlobal + `
local h = base .. 'rc'
if ARGV[2] == 'put' then return redis.call('HSET', h, ARGV[3], ARGV[4]) end
if ARGV[2] == 'del' then return redis.call('HDEL', h, ARGV[3]) end
return redis.call('HGETALL', h)
`)

// beginGenerationScript starts building a new generation for Reset: it
// takes the next generation number and registers it, with Redis's time,
// among those being built, which open leaves alone for a while. ARGV:
// global prefix.
var beginGenerationScript = redis.NewScript(`
local G = ARGV[1]
local g = redis.call('INCR', G .. 'nextgen')
local now = redis.call('TIME')
redis.call('ZADD', G .. 'building', now[1], g)
return g
`)

// newClientsScript lists clients in the clients set of a generation being
// built. ARGV: global prefix, generation, client ids.
var newClientsScript = redis.NewScript(`
local G = ARGV[1]
for i = 3, #ARGV do redis.call('SADD', G .. 'g' .. ARGV[2] .. ':clients', ARGV[i]) end
return 'ok'
`)

// startFlipScript records that a built generation (ARGV: global prefix,
// generation) is being flipped: the clients to flip are those of the
// current generation and of the new one. It answers {'ok', current}, or
// {'busy', generation} while another flip is in progress, {'superseded'}
// when a newer generation is already current (a later Reset won), or
// {'dropped'} when the generation is no longer being built (OpenRedis took
// it for a dead Reset's).
var startFlipScript = redis.NewScript(`
local G, new = ARGV[1], ARGV[2]
local f = redis.call('HGET', G .. 'flip', 'new')
if f then return {'busy', f} end
local cur = redis.call('GET', KEYS[1]) or '0'
if tonumber(new) <= tonumber(cur) then return {'superseded'} end
if not redis.call('ZSCORE', G .. 'building', new) then return {'dropped'} end
redis.call('HSET', G .. 'flip', 'new', new, 'old', cur)
redis.call('SUNIONSTORE', G .. 'flipset', G .. 'g' .. cur .. ':clients', G .. 'g' .. new .. ':clients')
return {'ok', cur}
`)

// flipStateScript answers the flip in progress: {} without one, else its
// generation then, per client to flip, the client id and '1' if the new
// generation's clients set lists it, else '0'. ARGV: global prefix.
var flipStateScript = redis.NewScript(`
local G = ARGV[1]
local f = redis.call('HGET', G .. 'flip', 'new')
if not f then return {} end
local out = {f}
for _, c in ipairs(redis.call('SMEMBERS', G .. 'flipset')) do
  out[#out+1] = c
  out[#out+1] = tostring(redis.call('SISMEMBER', G .. 'g' .. f .. ':clients', c))
end
return out
`)

// flipClientScript moves a client to a newer generation. ARGV: client
// prefix, generation, '1' if that generation's clients set lists the
// client. A client already there, or further, is left alone, so a flip
// rolled forward twice, or late, changes nothing.
var flipClientScript = redis.NewScript(`
local C, new = ARGV[1], ARGV[2]
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(new) then return 'ok' end
redis.call('SET', KEYS[1], new)
if ARGV[3] == '1' then redis.call('SET', C .. 'listed', new) else redis.call('DEL', C .. 'listed') end
return 'ok'
`)

// finishFlipScript makes a flipped generation current once every client of
// the flip's set was flipped. ARGV: global prefix, generation, number of
// clients flipped. The set only grows during a flip (registerScript), so
// an equal count means every client. It answers {'ok', replaced
// generation}, {'more'} when clients joined the set meanwhile, or {'gone'}
// when another replica finished the flip.
var finishFlipScript = redis.NewScript(`
local G, new = ARGV[1], ARGV[2]
if redis.call('HGET', G .. 'flip', 'new') ~= new then return {'gone'} end
if redis.call('SCARD', G .. 'flipset') ~= tonumber(ARGV[3]) then return {'more'} end
local old = redis.call('HGET', G .. 'flip', 'old')
redis.call('SET', KEYS[1], new)
redis.call('ZREM', G .. 'building', new)
redis.call('DEL', G .. 'flip', G .. 'flipset')
return {'ok', old}
`)

// generationsScript answers the current generation, Redis's time in
// seconds, then the generations being built with their start times.
var generationsScript = redis.NewScript(`
local out = {redis.call('GET', KEYS[1]) or '0', redis.call('TIME')[1]}
for _, v in ipairs(redis.call('ZRANGE', ARGV[1] .. 'building', 0, -1, 'WITHSCORES')) do out[#out+1] = v end
return out
`)
