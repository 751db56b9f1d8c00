import { ApiKeySchema } from "../gen/railgate/account/v1/account_pb.js";
import { VERSION_FIELD } from "./guardrail-fields.js";

/**
 * Lua scripts: each runs atomically on one hash tag. Keys a script derives
 * itself (from an index) carry the same tag, which keeps them cluster-safe.
 */

/**
 * Lua helpers shared by scripts: a reader of top-level protobuf fields (tag,
 * wire type, byte range), enough to find one field of a stored message or to
 * split a whole guardrail into its fields, and the stored-guardrail reader.
 */
const LUA_LIB = `
local function pb_varint(s, i)
  local n, mul = 0, 1
  while true do
    local b = string.byte(s, i)
    i = i + 1
    n = n + (b % 128) * mul
    if b < 128 then return n, i end
    mul = mul * 128
  end
end
-- Calls fn(number, first, last, value) for each top-level field (value: varints only).
local function pb_each(s, fn)
  local i = 1
  while i <= #s do
    local first = i
    local tag
    tag, i = pb_varint(s, i)
    local wire = tag % 8
    local value = nil
    if wire == 0 then value, i = pb_varint(s, i)
    elseif wire == 1 then i = i + 8
    elseif wire == 2 then local len; len, i = pb_varint(s, i); i = i + len
    elseif wire == 5 then i = i + 4
    else error("unsupported protobuf wire type " .. wire) end
    fn(math.floor(tag / 8), first, i - 1, value)
  end
end
-- A guardrail stored whole in "d" (the layout before per-field storage) becomes one entry per field.
local function split_legacy(gkey)
  local d = redis.call("HGET", gkey, "d")
  if not d then return end
  local parts = {}
  pb_each(d, function(num, first, last)
    if num ~= ${VERSION_FIELD} then parts["f:" .. num] = (parts["f:" .. num] or "") .. string.sub(d, first, last) end
  end)
  redis.call("HDEL", gkey, "d")
  for f, bytes in pairs(parts) do redis.call("HSET", gkey, f, bytes) end
end
-- A stored guardrail as one protobuf message ("" when missing).
local function read_guardrail(gkey)
  local all = redis.call("HGETALL", gkey)
  local out = {}
  for j = 1, #all, 2 do
    if all[j] == "d" then return all[j + 1] end
    if string.sub(all[j], 1, 2) == "f:" then out[#out + 1] = all[j + 1] end
  end
  return table.concat(out)
end
`;

/** Writes field entries from ARGV pairs (number, encoding); an empty encoding removes the field. */
const LUA_WRITE_FIELDS = `
local function write_fields(gkey, from, to)
  for i = from, to, 2 do
    if ARGV[i + 1] == "" then redis.call("HDEL", gkey, "f:" .. ARGV[i])
    else redis.call("HSET", gkey, "f:" .. ARGV[i], ARGV[i + 1]) end
  end
end
`;

/**
 * Takes a place in the workspace index unless the deployment is full. KEYS:
 * workspace index (global: the one key this script touches). ARGV:
 * createdAtMs, id, limit.
 */
export const CLAIM_WORKSPACE = `
local n = redis.call("ZCARD", KEYS[1])
if n >= tonumber(ARGV[3]) then return { "limit", n } end
redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])
return { "ok" }
`;

/**
 * KEYS: workspace, guardrail, index. ARGV: createdAtMs, id, default id (does
 * not count toward the limit), limit, then (field number, encoding) pairs.
 */
export const CREATE_GUARDRAIL = `${LUA_WRITE_FIELDS}
if redis.call("EXISTS", KEYS[1]) == 0 then return { "missing-workspace" } end
if redis.call("EXISTS", KEYS[2]) == 1 then return { "exists" } end
if ARGV[2] ~= ARGV[3] then
  local n = redis.call("ZCARD", KEYS[3])
  if redis.call("ZSCORE", KEYS[3], ARGV[3]) then n = n - 1 end
  if n >= tonumber(ARGV[4]) then return { "limit", n } end
end
write_fields(KEYS[2], 5, #ARGV)
redis.call("HSET", KEYS[2], "v", 1)
redis.call("ZADD", KEYS[3], "NX", ARGV[1], ARGV[2])
return { "ok" }
`;

/**
 * One PATCH, atomically. KEYS: workspace, guardrail, index. ARGV:
 * readVersion, materialize (1/0), createdAtMs, id, W, U, then W (field,
 * encoding) pairs to write, U (field, encoding) pairs that must still be
 * stored as they were read, then the whole guardrail's pairs (used only to
 * materialize a missing workspace default).
 * Returns { "ok", version, guardrail } or { "conflict" } or { "missing" }.
 */
export const PATCH_GUARDRAIL = `${LUA_LIB}${LUA_WRITE_FIELDS}
local g = KEYS[2]
local w = tonumber(ARGV[5])
local u = tonumber(ARGV[6])
local patch_from = 7
local guard_from = patch_from + 2 * w
local base_from = guard_from + 2 * u
if redis.call("EXISTS", g) == 0 then
  -- Deleted since it was read: the caller re-reads (404, or a fresh default).
  if tonumber(ARGV[1]) > 0 then return { "conflict" } end
  if ARGV[2] ~= "1" or redis.call("EXISTS", KEYS[1]) == 0 then return { "missing" } end
  write_fields(g, base_from, #ARGV)
  redis.call("HSET", g, "v", 1)
  redis.call("ZADD", KEYS[3], "NX", ARGV[3], ARGV[4])
  return { "ok", 1, read_guardrail(g) }
end
split_legacy(g)
for i = guard_from, base_from - 1, 2 do
  if (redis.call("HGET", g, "f:" .. ARGV[i]) or "") ~= ARGV[i + 1] then return { "conflict" } end
end
write_fields(g, patch_from, guard_from - 1)
local v = redis.call("HINCRBY", g, "v", 1)
return { "ok", v, read_guardrail(g) }
`;

/**
 * KEYS: guardrail, index, key assignments, member assignments, their two
 * indexes, the guardrail's key and member assignment indexes. ARGV: id.
 */
export const DELETE_GUARDRAIL = `
if redis.call("DEL", KEYS[1]) == 0 then return 0 end
redis.call("ZREM", KEYS[2], ARGV[1])
for i = 3, 4 do
  for _, subject in ipairs(redis.call("ZRANGE", KEYS[i + 4], 0, -1)) do
    local rec = redis.call("HGET", KEYS[i], subject)
    if rec and cjson.decode(rec).guardrailId == ARGV[1] then
      redis.call("HDEL", KEYS[i], subject)
      redis.call("ZREM", KEYS[i + 2], subject)
    end
  end
  redis.call("DEL", KEYS[i + 4])
end
return 1
`;

/**
 * KEYS: workspace (unless org), key, index, enabled index. ARGV: data,
 * createdAtMs, hash, requireWorkspace, enabled (1/0), limit.
 */
export const CREATE_KEY = `
if ARGV[4] == "1" and redis.call("EXISTS", KEYS[1]) == 0 then return { "missing-workspace" } end
if redis.call("EXISTS", KEYS[2]) == 1 then return { "exists" } end
local n = redis.call("ZCARD", KEYS[3])
if n >= tonumber(ARGV[6]) then return { "limit", n } end
redis.call("SET", KEYS[2], ARGV[1])
redis.call("ZADD", KEYS[3], ARGV[2], ARGV[3])
if ARGV[5] == "1" then redis.call("ZADD", KEYS[4], ARGV[2], ARGV[3]) end
return { "ok" }
`;

/** KEYS: key, index, enabled index. ARGV: data, hash, enabled (1/0). */
export const PUT_KEY = `
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("SET", KEYS[1], ARGV[1])
local created = redis.call("ZSCORE", KEYS[2], ARGV[2])
if ARGV[3] == "1" and created then redis.call("ZADD", KEYS[3], created, ARGV[2])
else redis.call("ZREM", KEYS[3], ARGV[2]) end
return 1
`;

/** KEYS: key, index, enabled index, key assignments, their index. ARGV: hash, scope prefix. */
export const DELETE_KEY = `
if redis.call("DEL", KEYS[1]) == 0 then return 0 end
redis.call("ZREM", KEYS[2], ARGV[1])
redis.call("ZREM", KEYS[3], ARGV[1])
local old = redis.call("HGET", KEYS[4], ARGV[1])
if old then
  redis.call("HDEL", KEYS[4], ARGV[1])
  redis.call("ZREM", KEYS[5], ARGV[1])
  redis.call("ZREM", ARGV[2] .. "ka:g:" .. cjson.decode(old).guardrailId, ARGV[1])
end
return 1
`;

/**
 * KEYS: guardrail, assignments, their index, then one subject check key per
 * record (the key record for key assignments; the guardrail again for
 * members). ARGV: guardrailId, scope prefix .. tag ("...ka" / "...ma"),
 * limit, then one JSON record per subject (subjects distinct).
 * Subjects whose check key is gone are skipped; re-assigning the same
 * guardrail does not count. Returns the number assigned, -1 when the
 * guardrail is missing, or { -2, count, adding } when the new subjects would
 * pass the limit (then nothing is assigned).
 */
export const ASSIGN = `
if redis.call("EXISTS", KEYS[1]) == 0 then return -1 end
local todo = {}
local adding = 0
for i = 4, #ARGV do
  if redis.call("EXISTS", KEYS[i]) == 1 then
    local rec = cjson.decode(ARGV[i])
    local old = redis.call("HGET", KEYS[2], rec.subject)
    local previous = old and cjson.decode(old).guardrailId
    if previous ~= ARGV[1] then
      todo[#todo + 1] = { ARGV[i], rec, previous }
      if not old then adding = adding + 1 end
    end
  end
end
local count = redis.call("HLEN", KEYS[2])
if adding > 0 and count + adding > tonumber(ARGV[3]) then return { -2, count, adding } end
for _, t in ipairs(todo) do
  local json, rec, previous = t[1], t[2], t[3]
  redis.call("HSET", KEYS[2], rec.subject, json)
  redis.call("ZADD", KEYS[3], rec.createdAtMs, rec.subject)
  if previous then redis.call("ZREM", ARGV[2] .. ":g:" .. previous, rec.subject) end
  redis.call("ZADD", ARGV[2] .. ":g:" .. ARGV[1], rec.createdAtMs, rec.subject)
end
return #todo
`;

/** KEYS: assignments, their index, the guardrail's index. ARGV: guardrailId, subjects... */
export const UNASSIGN = `
local n = 0
for i = 2, #ARGV do
  local old = redis.call("HGET", KEYS[1], ARGV[i])
  if old and cjson.decode(old).guardrailId == ARGV[1] then
    redis.call("HDEL", KEYS[1], ARGV[i])
    redis.call("ZREM", KEYS[2], ARGV[i])
    redis.call("ZREM", KEYS[3], ARGV[i])
    n = n + 1
  end
end
return n
`;

/**
 * KEYS: key, key assignments, member assignments. ARGV: hash, memberUserId,
 * scope prefix, default guardrail id ("" for none).
 * Returns { key, keyGuardrail, memberGuardrail, defaultGuardrail } data ("" = none).
 */
export const LOAD_GOVERNANCE = `${LUA_LIB}
local key = redis.call("GET", KEYS[1])
if not key then return {} end
local function guardrail(id)
  if not id or id == "" then return "" end
  return read_guardrail(ARGV[3] .. "g:" .. id)
end
local function assigned(hkey, subject)
  if subject == "" then return nil end
  local rec = redis.call("HGET", hkey, subject)
  if not rec then return nil end
  return cjson.decode(rec).guardrailId
end
return { key, guardrail(assigned(KEYS[2], ARGV[1])), guardrail(assigned(KEYS[3], ARGV[2])), guardrail(ARGV[4]) }
`;

/**
 * KEYS: workspace, guardrail index, key index, key assignments, member
 * assignments, enabled key index, key and member assignment indexes, layout
 * marker. ARGV: scope prefix.
 * Returns { "ok", deleted guardrail ids, deleted key hashes } (their global
 * pointers are removed by the caller), { "active-keys", count } when enabled
 * keys remain (then nothing is deleted), or nil when the workspace did not exist.
 */
export const DELETE_WORKSPACE = `
if redis.call("EXISTS", KEYS[1]) == 0 then return nil end
local active = redis.call("ZCARD", KEYS[6])
if active > 0 then return { "active-keys", active } end
local gs = redis.call("ZRANGE", KEYS[2], 0, -1)
local ks = redis.call("ZRANGE", KEYS[3], 0, -1)
for _, id in ipairs(gs) do
  redis.call("DEL", ARGV[1] .. "g:" .. id, ARGV[1] .. "ka:g:" .. id, ARGV[1] .. "ma:g:" .. id)
end
for _, h in ipairs(ks) do redis.call("DEL", ARGV[1] .. "k:" .. h) end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9])
return { "ok", gs, ks }
`;

/**
 * Builds a scope's indexes from its records, once: data written before the
 * enabled-key and assignment indexes existed. Writers keep them up to date
 * from then on (and already did for what they wrote meanwhile: indexing is
 * idempotent). KEYS: layout marker, key index, enabled key index, key
 * assignments, member assignments, their two indexes. ARGV: scope prefix.
 */
export const INDEX_SCOPE = `${LUA_LIB}
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
local ks = redis.call("ZRANGE", KEYS[2], 0, -1, "WITHSCORES")
for j = 1, #ks, 2 do
  local data = redis.call("GET", ARGV[1] .. "k:" .. ks[j])
  if data then
    local disabled = false
    pb_each(data, function(num, first, last, value)
      if num == ${ApiKeySchema.field.disabled.number} and value and value ~= 0 then disabled = true end
    end)
    if not disabled then redis.call("ZADD", KEYS[3], ks[j + 1], ks[j]) end
  end
end
local tags = { "ka", "ma" }
for i = 1, 2 do
  local all = redis.call("HGETALL", KEYS[3 + i])
  for j = 1, #all, 2 do
    local rec = cjson.decode(all[j + 1])
    redis.call("ZADD", KEYS[5 + i], rec.createdAtMs, all[j])
    redis.call("ZADD", ARGV[1] .. tags[i] .. ":g:" .. rec.guardrailId, rec.createdAtMs, all[j])
  end
end
redis.call("SET", KEYS[1], "2")
return 1
`;

/**
 * A budget counter is a hash of UTC day number -> micro-dollars spent that
 * day; a window's spend is the sum of its days. Charging refreshes the
 * counter's lifetime and drops days no window can reach any more.
 */
const LUA_SPEND = `
local function window_spent(key, first, last)
  local fields = {}
  for d = tonumber(first), tonumber(last) do fields[#fields + 1] = tostring(d) end
  if #fields == 0 then return 0 end
  local spent = 0
  for _, v in ipairs(redis.call("HMGET", key, unpack(fields))) do
    if v then spent = spent + tonumber(v) end
  end
  return spent
end
local function charge(key, day, amount, ttl, kept)
  redis.call("HINCRBY", key, day, amount)
  redis.call("EXPIRE", key, ttl)
  if redis.call("HLEN", key) > kept then
    local oldest = tonumber(day) - kept
    for _, f in ipairs(redis.call("HKEYS", key)) do
      if tonumber(f) <= oldest then redis.call("HDEL", key, f) end
    end
  end
end
`;

/**
 * Admission: every check first, then every reservation, so a refused request
 * changes nothing. KEYS: rate, credits, key spend, the spend index, then one
 * spend counter per budget. ARGV: rateLimit (0 = none), ms until the rate window
 * ends, creditMicros, keyLimitMicros (-1 = none), keyMicros, counter ttl, days
 * kept, then limit, amount, window's first day, today and the counter's index
 * member per budget. Budgets are checked before the key's own limit
 * (OpenRouter's order).
 */
export const ADMIT = `${LUA_SPEND}
local rl = tonumber(ARGV[1])
if rl > 0 and tonumber(redis.call("GET", KEYS[1]) or "0") >= rl then
  return { "rate-limit", redis.call("PTTL", KEYS[1]) }
end
local credit = tonumber(ARGV[3])
local metered = redis.call("EXISTS", KEYS[2]) == 1
if metered and credit > 0 then
  local balance = tonumber(redis.call("GET", KEYS[2]))
  if balance < credit then return { "credits", balance } end
end
-- A request that costs a counter nothing (free or BYOK) cannot exceed it.
for i = 5, #KEYS do
  local base = 8 + (i - 5) * 5
  local limit = tonumber(ARGV[base])
  local amount = tonumber(ARGV[base + 1])
  if amount > 0 then
    local spent = window_spent(KEYS[i], ARGV[base + 2], ARGV[base + 3])
    if spent >= limit or spent + amount > limit then return { "budget", i - 5, spent } end
  end
end
local klim = tonumber(ARGV[4])
local kamt = tonumber(ARGV[5])
if klim >= 0 and kamt > 0 then
  local spent = tonumber(redis.call("GET", KEYS[3]) or "0")
  if spent >= klim or spent + kamt > klim then return { "key-limit", spent } end
end
local used = 0
if rl > 0 then
  used = redis.call("INCR", KEYS[1])
  if used == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
end
if metered and credit > 0 then redis.call("DECRBY", KEYS[2], credit) end
if kamt > 0 then redis.call("INCRBY", KEYS[3], kamt) end
local charged = false
for i = 5, #KEYS do
  local base = 8 + (i - 5) * 5
  if tonumber(ARGV[base + 1]) > 0 then
    charge(KEYS[i], ARGV[base + 3], ARGV[base + 1], ARGV[6], tonumber(ARGV[7]))
    -- GT: a replica whose clock is still on yesterday never hides today's charge.
    redis.call("ZADD", KEYS[4], "GT", ARGV[base + 3], ARGV[base + 4])
    charged = true
  end
end
if charged then
  -- Counters whose last charge no window can reach any more have expired (or soon will).
  redis.call("ZREMRANGEBYSCORE", KEYS[4], "-inf", "(" .. (tonumber(ARGV[8 + 3]) - tonumber(ARGV[7])))
  redis.call("EXPIRE", KEYS[4], ARGV[6])
end
return { "ok", metered and 1 or 0, used }
`;

/**
 * Every guardrail's spend in its window, summed per kind of entity, for
 * metrics. KEYS: the spend index. ARGV: the scope's key prefix, then the
 * guardrail id, window's first day and last day per guardrail. Answers per
 * guardrail, in order: keys' total, members' total, the largest entity's
 * spend and the number of entities that spent.
 */
export const GUARDRAIL_SPEND = `${LUA_SPEND}
local queries = {}
local by_id = {}
local earliest = nil
for i = 2, #ARGV, 3 do
  local q = { first = tonumber(ARGV[i + 1]), last = ARGV[i + 2], key = 0, member = 0, max = 0, n = 0 }
  queries[#queries + 1] = q
  by_id[ARGV[i]] = by_id[ARGV[i]] or {}
  table.insert(by_id[ARGV[i]], q)
  if earliest == nil or q.first < earliest then earliest = q.first end
end
local out = {}
if earliest == nil then return out end
local members = redis.call("ZRANGEBYSCORE", KEYS[1], earliest, "+inf", "WITHSCORES")
for j = 1, #members, 2 do
  local m = members[j]
  local slash = string.find(m, "/", 1, true)
  local wanted = slash and by_id[string.sub(m, 1, slash - 1)]
  if wanted then
    local entity = string.sub(m, slash + 1)
    local counter = ARGV[1] .. "spend-d:" .. string.sub(m, 1, slash - 1) .. ":" .. entity
    for _, q in ipairs(wanted) do
      if tonumber(members[j + 1]) >= q.first then
        local spent = window_spent(counter, q.first, q.last)
        if spent > 0 then
          if string.sub(entity, 1, 4) == "key:" then q.key = q.key + spent else q.member = q.member + spent end
          if spent > q.max then q.max = spent end
          q.n = q.n + 1
        end
      end
    end
  end
end
for _, q in ipairs(queries) do
  out[#out + 1] = q.key
  out[#out + 1] = q.member
  out[#out + 1] = q.max
  out[#out + 1] = q.n
end
return out
`;

/**
 * Replaces reservations with real costs, once per admission id, and stores
 * the request's record: the one round trip after a stream. KEYS: the id's
 * settled marker, credits, key spend, the record, U key usage counters, budget
 * counters. ARGV: marker ttl (0 = no id: always apply), metered (0/1),
 * creditRefund, keyDelta, record ttl (0 = no record), record bytes, U, then
 * amount and ttl (0 = kept) per usage counter, then per budget the day its
 * reservation was charged to and the delta (applied to that day, even when the
 * stream ended after midnight, while that day's bucket still exists).
 * Answers 0 when the id was already settled (the record is written anyway:
 * a retry that lost its answer must still leave the record).
 */
export const SETTLE = `
if tonumber(ARGV[5]) > 0 then redis.call("SET", KEYS[4], ARGV[6], "EX", ARGV[5]) end
if tonumber(ARGV[1]) > 0 and not redis.call("SET", KEYS[1], "1", "NX", "EX", ARGV[1]) then return 0 end
if ARGV[2] == "1" and tonumber(ARGV[3]) ~= 0 and redis.call("EXISTS", KEYS[2]) == 1 then
  redis.call("INCRBY", KEYS[2], ARGV[3])
end
if tonumber(ARGV[4]) ~= 0 then redis.call("INCRBY", KEYS[3], ARGV[4]) end
local u = tonumber(ARGV[7])
for j = 1, u do
  local amount = tonumber(ARGV[6 + 2 * j])
  local ttl = tonumber(ARGV[7 + 2 * j])
  if amount > 0 then
    redis.call("INCRBY", KEYS[4 + j], amount)
    if ttl > 0 then redis.call("EXPIRE", KEYS[4 + j], ttl) end
  end
end
for i = 5 + u, #KEYS do
  local base = 8 + 2 * u + (i - 5 - u) * 2
  local day = ARGV[base]
  if tonumber(ARGV[base + 1]) ~= 0 and redis.call("HEXISTS", KEYS[i], day) == 1 then
    redis.call("HINCRBY", KEYS[i], day, ARGV[base + 1])
  end
end
return 1
`;
