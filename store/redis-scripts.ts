/**
 * Lua scripts: each runs atomically on one hash tag. Keys a script derives
 * itself (from an index) carry the same tag, which keeps them cluster-safe.
 */

/** The stored-guardrail reader scripts share: one entry per field ("f:<number>"). */
const LUA_LIB = `
-- A stored guardrail as one protobuf message ("" when missing).
local function read_guardrail(gkey)
  local all = redis.call("HGETALL", gkey)
  local out = {}
  for j = 1, #all, 2 do
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
 * The workspace's policy document (store/policies/redis-policy-docs.ts) as guardrail writes
 * meet it, in the outbox wrapper (SCOPE). A guardrail create or PATCH decided under version
 * ARGV[n] of the document applies only while it is still that version ("-1": unchecked): a type
 * moved to policies since may have made the change govern nothing. Every guardrail write
 * (assignments too) counts itself in `gw`, which a write that moves a type checks in turn, so
 * the policies it made from the guardrails it read never miss one.
 */
const LUA_POLICY_DOC = `
local function policy_doc_moved(expected)
  if expected == "-1" then return false end
  return tonumber(redis.call("HGET", SCOPE .. "policies", "v") or "0") ~= tonumber(expected)
end
local function guardrail_written()
  redis.call("HINCRBY", SCOPE .. "policies", "gw", 1)
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
 * not count toward the limit), limit, the policy document's version the
 * create was decided under (LUA_POLICY_DOC), then (field number, encoding) pairs.
 */
export const CREATE_GUARDRAIL = `${LUA_WRITE_FIELDS}${LUA_POLICY_DOC}
if redis.call("EXISTS", KEYS[1]) == 0 then return { "missing-workspace" } end
if redis.call("EXISTS", KEYS[2]) == 1 then return { "exists" } end
if policy_doc_moved(ARGV[5]) then return { "conflict" } end
if ARGV[2] ~= ARGV[3] then
  local n = redis.call("ZCARD", KEYS[3])
  if redis.call("ZSCORE", KEYS[3], ARGV[3]) then n = n - 1 end
  if n >= tonumber(ARGV[4]) then return { "limit", n } end
end
write_fields(KEYS[2], 6, #ARGV)
redis.call("HSET", KEYS[2], "v", 1)
guardrail_written()
redis.call("ZADD", KEYS[3], "NX", ARGV[1], ARGV[2])
return { "ok" }
`;

/**
 * One PATCH, atomically. KEYS: workspace, guardrail, index. ARGV:
 * readVersion, materialize (1/0), createdAtMs, id, W, U, the policy
 * document's version the patch was decided under (LUA_POLICY_DOC), then W (field,
 * encoding) pairs to write, U (field, encoding) pairs that must still be
 * stored as they were read, then the whole guardrail's pairs (used only to
 * materialize a missing workspace default).
 * Returns { "ok", version, guardrail } or { "conflict" } or { "missing" }.
 */
export const PATCH_GUARDRAIL = `${LUA_LIB}${LUA_WRITE_FIELDS}${LUA_POLICY_DOC}
local g = KEYS[2]
local w = tonumber(ARGV[5])
local u = tonumber(ARGV[6])
local patch_from = 8
if policy_doc_moved(ARGV[7]) then return { "conflict" } end
local guard_from = patch_from + 2 * w
local base_from = guard_from + 2 * u
if redis.call("EXISTS", g) == 0 then
  -- Deleted since it was read: the caller re-reads (404, or a fresh default).
  if tonumber(ARGV[1]) > 0 then return { "conflict" } end
  if ARGV[2] ~= "1" or redis.call("EXISTS", KEYS[1]) == 0 then return { "missing" } end
  write_fields(g, base_from, #ARGV)
  redis.call("HSET", g, "v", 1)
  redis.call("ZADD", KEYS[3], "NX", ARGV[3], ARGV[4])
  guardrail_written()
  return { "ok", 1, read_guardrail(g) }
end
for i = guard_from, base_from - 1, 2 do
  if (redis.call("HGET", g, "f:" .. ARGV[i]) or "") ~= ARGV[i + 1] then return { "conflict" } end
end
write_fields(g, patch_from, guard_from - 1)
guardrail_written()
local v = redis.call("HINCRBY", g, "v", 1)
return { "ok", v, read_guardrail(g) }
`;

/**
 * KEYS: guardrail, index, key assignments, member assignments, their two
 * indexes, the guardrail's key and member assignment indexes. ARGV: id.
 */
export const DELETE_GUARDRAIL = `${LUA_POLICY_DOC}
if redis.call("DEL", KEYS[1]) == 0 then return 0 end
guardrail_written()
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
export const ASSIGN = `${LUA_POLICY_DOC}
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
if #todo > 0 then guardrail_written() end
return #todo
`;

/** KEYS: assignments, their index, the guardrail's index. ARGV: guardrailId, subjects... */
export const UNASSIGN = `${LUA_POLICY_DOC}
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
if n > 0 then guardrail_written() end
return n
`;

/**
 * KEYS: workspace, its members. ARGV: limit, then one MemberRecord JSON per user (users
 * distinct). Adds the users not yet members (a member already there keeps its record). Returns
 * how many it added, -1 when the workspace is missing, or { -2, count, adding } when the new
 * members would pass the limit (then nothing is added).
 */
export const ADD_MEMBERS = `
if redis.call("EXISTS", KEYS[1]) == 0 then return -1 end
local todo = {}
for i = 2, #ARGV do
  local rec = cjson.decode(ARGV[i])
  if redis.call("HEXISTS", KEYS[2], rec.userId) == 0 then todo[#todo + 1] = { rec.userId, ARGV[i] } end
end
local count = redis.call("HLEN", KEYS[2])
if #todo > 0 and count + #todo > tonumber(ARGV[1]) then return { -2, count, #todo } end
for _, t in ipairs(todo) do redis.call("HSET", KEYS[2], t[1], t[2]) end
return #todo
`;

/** KEYS: the workspace's members. ARGV: user ids. Returns how many were members. */
export const REMOVE_MEMBERS = `
local n = 0
for i = 1, #ARGV do n = n + redis.call("HDEL", KEYS[1], ARGV[i]) end
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
 * assignments, enabled key index, key and member assignment indexes, members, policy document.
 * ARGV: scope prefix.
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
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10])
return { "ok", gs, ks }
`;

/**
/** The message of an error caught by pcall (redis.call raises a table with the reply's text). */
const LUA_FAILURE = `
local function failure(e)
  if type(e) == "table" then return tostring(e.err or "script error") end
  return tostring(e)
end
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
 * Admission of a group of requests of one scope, each in turn exactly as it
 * would be alone (every check first, then every reservation, so a refused
 * request changes nothing): the group is one script, one round trip, for
 * requests that arrived together (store/group-commit.ts). Key names are built
 * here from the scope's prefix, so each request sends its key hash once
 * rather than five long key names. KEYS: the scope's credits. ARGV: the
 * scope's key prefix, counter ttl, days kept, then per request: key hash,
 * rate limit (0 = none), rate window index, ms until the rate window ends,
 * creditMicros, keyLimitMicros (-1 = none), keyMicros, the key limit window's
 * id ("" = the limit, if any, is all-time, on the key's all-time spend) and
 * its ttl, the number of budgets, the admission id to track ("" = untracked), its lease's
 * end (ms), the admission as JSON, the record to write if it is recovered and whether the key
 * limit counts BYOK spend too (1/0: then the BYOK counter of the same window, all-time or
 * limit_reset's, is added to the spend it is checked on), then per
 * budget: guardrail id, entity ("k" = the request's own key), limit, amount, window's first
 * day, today. A tracked admission is registered in the same step as its reservation
 * (`resv`, `resv-r`, and `resv-i` by lease end), so a process that dies holding it leaves
 * what another needs to settle it (store/reservations.ts). Budgets
 * are checked before the key's own limit (OpenRouter's order). Answers one
 * reply per request: { "ok", metered, rate used }, the refusal, or
 * { "error", message } for a request that alone met an error.
 */
export const ADMIT_GROUP = `${LUA_SPEND}${LUA_FAILURE}
local P = ARGV[1]
local ttl = ARGV[2]
local kept = tonumber(ARGV[3])
local credits = KEYS[1]
local function admit(i)
  local hash = ARGV[i]
  local rl = tonumber(ARGV[i + 1])
  local rate = P .. "rate:" .. hash .. ":" .. ARGV[i + 2]
  local credit = tonumber(ARGV[i + 4])
  local klim = tonumber(ARGV[i + 5])
  local kamt = tonumber(ARGV[i + 6])
  local spend = P .. "keyspend:" .. hash
  local kwin = spend
  if ARGV[i + 7] ~= "" then kwin = P .. "keyusage:" .. hash .. ":credit:" .. ARGV[i + 7] end
  local nb = tonumber(ARGV[i + 9])
  local budgets = {}
  for b = 1, nb do
    local j = i + 15 + (b - 1) * 6
    local entity = ARGV[j + 1]
    if entity == "k" then entity = "key:" .. hash end
    budgets[b] = { key = P .. "spend-d:" .. ARGV[j] .. ":" .. entity, member = ARGV[j] .. "/" .. entity,
      limit = tonumber(ARGV[j + 2]), amount = tonumber(ARGV[j + 3]), raw = ARGV[j + 3], first = ARGV[j + 4], day = ARGV[j + 5] }
  end
  if rl > 0 and tonumber(redis.call("GET", rate) or "0") >= rl then
    return { "rate-limit", redis.call("PTTL", rate) }
  end
  local metered = redis.call("EXISTS", credits) == 1
  if metered and credit > 0 then
    local balance = tonumber(redis.call("GET", credits))
    if balance < credit then return { "credits", balance } end
  end
  -- A request that costs a counter nothing (free or BYOK) cannot exceed it.
  for b, c in ipairs(budgets) do
    if c.amount > 0 then
      local spent = window_spent(c.key, c.first, c.day)
      if spent >= c.limit or spent + c.amount > c.limit then return { "budget", b - 1, spent } end
    end
  end
  if klim >= 0 and kamt > 0 then
    local spent = tonumber(redis.call("GET", kwin) or "0")
    if ARGV[i + 14] == "1" then
      -- include_byok_in_limit: the BYOK spend of the same window (all-time: "total") counts too.
      local window = ARGV[i + 7] ~= "" and ARGV[i + 7] or "total"
      spent = spent + tonumber(redis.call("GET", P .. "keyusage:" .. hash .. ":byok:" .. window) or "0")
    end
    if spent >= klim or spent + kamt > klim then return { "key-limit", spent } end
  end
  local used = 0
  if rl > 0 then
    used = redis.call("INCR", rate)
    if used == 1 then redis.call("PEXPIRE", rate, ARGV[i + 3]) end
  end
  if metered and credit > 0 then redis.call("DECRBY", credits, ARGV[i + 4]) end
  if kamt > 0 then
    redis.call("INCRBY", spend, ARGV[i + 6])
    if kwin ~= spend then
      redis.call("INCRBY", kwin, ARGV[i + 6])
      redis.call("EXPIRE", kwin, math.max(1, tonumber(ARGV[i + 8])))
    end
  end
  local charged = nil
  for _, c in ipairs(budgets) do
    if c.amount > 0 then
      charge(c.key, c.day, c.raw, ttl, kept)
      -- GT: a replica whose clock is still on yesterday never hides today's charge.
      redis.call("ZADD", P .. "spend-i", "GT", c.day, c.member)
      charged = charged or c.day
    end
  end
  if charged then
    -- Counters whose last charge no window can reach any more have expired (or soon will).
    redis.call("ZREMRANGEBYSCORE", P .. "spend-i", "-inf", "(" .. (tonumber(charged) - kept))
    redis.call("EXPIRE", P .. "spend-i", ttl)
  end
  local tracked = ARGV[i + 10]
  if tracked ~= "" then
    redis.call("HSET", P .. "resv", tracked, (metered and "1" or "0") .. ARGV[i + 12])
    redis.call("HSET", P .. "resv-r", tracked, ARGV[i + 13])
    redis.call("ZADD", P .. "resv-i", ARGV[i + 11], tracked)
  end
  return { "ok", metered and 1 or 0, used }
end
local out = {}
local i = 4
while i <= #ARGV do
  -- A request that fails (a counter of the wrong type) fails alone; the others go on.
  local done, reply = pcall(admit, i)
  out[#out + 1] = done and reply or { "error", failure(reply) }
  i = i + 15 + tonumber(ARGV[i + 9]) * 6
end
return out
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
 * Replaces reservations with real costs, once per admission id, for a group of
 * requests of one scope (store/group-commit.ts): the one round trip after a
 * stream, shared by the streams that ended together (the request's record goes
 * to the request-log database, not here). Each request's marker, set in the
 * same atomic step as its counters move, makes a retried group (or one request
 * of it) apply nothing twice. KEYS: the scope's credits. ARGV: the scope's key
 * prefix, marker ttl, then the key usage windows of now (daily, weekly,
 * monthly: window id and ttl each), now (ms), then per request: admission id ("" =
 * always apply), metered (0/1), credit refund, key spend delta, key hash, real
 * credit cost, BYOK cost, the key limit's window (0 = none, 1-3 = daily,
 * weekly, monthly), that window's id as the admission reserved it and the
 * difference to apply there (while its counter exists), the number of
 * budgets, whether the admission is tracked (1/0: then it applies only while its reservation is
 * registered, which it removes, so an owner and a recovering process never both settle it), the
 * record to put in the outbox ("" = none; "P" and a whole record, or how the request ended, which
 * the script joins to the draft admission registered: store/reservations.ts), then per budget: guardrail id, entity ("k" = the
 * request's key), the day its reservation was charged to and the delta (applied to that day,
 * even when the stream ended after midnight, while that day's bucket still exists). The record
 * goes to the scope's outbox (`outbox`, `outbox-i` by time: ARGV 9) in the same step as the
 * counters, so a settled request always has its record. Answers per request 1 (applied), 0 (a
 * repeat: skipped) or the error that request alone met.
 */
export const SETTLE_GROUP = `${LUA_FAILURE}
local P = ARGV[1]
local marker_ttl = tonumber(ARGV[2])
local windows = { { id = ARGV[3], ttl = ARGV[4] }, { id = ARGV[5], ttl = ARGV[6] }, { id = ARGV[7], ttl = ARGV[8] } }
local now = ARGV[9]
local credits = KEYS[1]
local function settle(i, first_budget, next_i)
  local id = ARGV[i]
  local hash = ARGV[i + 4]
  local draft = ""
  if ARGV[i + 11] == "1" then
    if redis.call("ZREM", P .. "resv-i", id) == 0 then return 0 end
    draft = redis.call("HGET", P .. "resv-r", id) or ""
    for _, h in ipairs({ "resv", "resv-r", "resv-a", "resv-p" }) do redis.call("HDEL", P .. h, id) end
  end
  if id ~= "" and marker_ttl > 0 and not redis.call("SET", P .. "settled:" .. id, "1", "NX", "EX", marker_ttl) then
    return 0
  end
  local record = ARGV[i + 12]
  if record ~= "" then
    -- "P": a whole record; else how it ended, joined here to the draft registered at admission.
    if string.byte(record, 1) ~= 80 then record = "J" .. draft .. "\\n" .. record end
    redis.call("HSET", P .. "outbox", id, record)
    redis.call("ZADD", P .. "outbox-i", now, id)
  end
  local refund = tonumber(ARGV[i + 2])
  if ARGV[i + 1] == "1" and refund ~= 0 and redis.call("EXISTS", credits) == 1 then
    redis.call("INCRBY", credits, ARGV[i + 2])
  end
  if tonumber(ARGV[i + 3]) ~= 0 then redis.call("INCRBY", P .. "keyspend:" .. hash, ARGV[i + 3]) end
  local usage = P .. "keyusage:" .. hash .. ":"
  local credit = tonumber(ARGV[i + 5])
  local byok = tonumber(ARGV[i + 6])
  local limited = tonumber(ARGV[i + 7])
  for w = 1, 3 do
    if w == limited then
      -- The key limit's window counter: it holds the reservation, so the difference moves.
      local key = usage .. "credit:" .. ARGV[i + 8]
      local delta = tonumber(ARGV[i + 9])
      if delta ~= 0 and redis.call("EXISTS", key) == 1 then redis.call("INCRBY", key, ARGV[i + 9]) end
    elseif credit > 0 then
      local key = usage .. "credit:" .. windows[w].id
      redis.call("INCRBY", key, ARGV[i + 5])
      redis.call("EXPIRE", key, windows[w].ttl)
    end
  end
  if byok > 0 then
    redis.call("INCRBY", usage .. "byok:total", ARGV[i + 6])
    for w = 1, 3 do
      local key = usage .. "byok:" .. windows[w].id
      redis.call("INCRBY", key, ARGV[i + 6])
      redis.call("EXPIRE", key, windows[w].ttl)
    end
  end
  for j = first_budget, next_i - 1, 4 do
    local entity = ARGV[j + 1]
    if entity == "k" then entity = "key:" .. hash end
    local key = P .. "spend-d:" .. ARGV[j] .. ":" .. entity
    if tonumber(ARGV[j + 3]) ~= 0 and redis.call("HEXISTS", key, ARGV[j + 2]) == 1 then
      redis.call("HINCRBY", key, ARGV[j + 2], ARGV[j + 3])
    end
  end
  return 1
end
local out = {}
local i = 10
while i <= #ARGV do
  local first_budget = i + 13
  local next_i = first_budget + tonumber(ARGV[i + 10]) * 4
  -- A request that fails (a counter of the wrong type) fails alone; the others go on.
  local done, reply = pcall(settle, i, first_budget, next_i)
  out[#out + 1] = done and reply or failure(reply)
  i = next_i
end
return out
`;

/**
 * Moves the leases of an owner's reservations and stores what each has served so far. KEYS: the
 * scope's lease index (a key, so a Redis Cluster routes the script to its slot). ARGV: the
 * scope's key prefix, then per reservation: admission id, lease end (ms), the settlement as
 * JSON and how its record ends if it is settled from here ("" = unchanged). A reservation
 * already settled (by its owner's retried settlement or by a recovering process) is left gone.
 */
export const KEEP_RESERVATIONS = `
local P = ARGV[1]
local kept = 0
for i = 2, #ARGV, 4 do
  local id = ARGV[i]
  if redis.call("ZSCORE", KEYS[1], id) then
    redis.call("ZADD", KEYS[1], "XX", ARGV[i + 1], id)
    if ARGV[i + 2] ~= "" then
      redis.call("HSET", P .. "resv-a", id, ARGV[i + 2])
      redis.call("HSET", P .. "resv-p", id, ARGV[i + 3])
    end
    kept = kept + 1
  end
end
return kept
`;

/**
 * Reservations whose lease ended (their owner died or froze), for a live process to settle.
 * KEYS: the scope's lease index. ARGV: the scope's key prefix, now (ms), how many at most.
 * Answers per reservation: id, metered flag then admission JSON, settlement JSON and how its
 * record ends ("" = nothing served yet).
 */
export const EXPIRED_RESERVATIONS = `
local P = ARGV[1]
local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[2], "LIMIT", 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call("HGET", P .. "resv", id) or ""
  out[#out + 1] = redis.call("HGET", P .. "resv-a", id) or ""
  out[#out + 1] = redis.call("HGET", P .. "resv-p", id) or ""
end
return out
`;

/**
 * Records of the outbox written before a time, to move into the request log. KEYS: the outbox's
 * time index. ARGV: the scope's key prefix, before (ms), how many at most. Answers id, record pairs.
 */
export const OUTBOX_RECORDS = `
local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[2], "LIMIT", 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local record = redis.call("HGET", ARGV[1] .. "outbox", id)
  if record then
    out[#out + 1] = id
    out[#out + 1] = record
  else
    redis.call("ZREM", KEYS[1], id)
  end
end
return out
`;

/** Records now in the request log leave the outbox. KEYS: its time index. ARGV: prefix, ids. */
export const OUTBOX_DONE = `
for i = 2, #ARGV do
  redis.call("ZREM", KEYS[1], ARGV[i])
  redis.call("HDEL", ARGV[1] .. "outbox", ARGV[i])
end
return #ARGV - 1
`;

/**
 * A top-up applied once per idempotency id: the marker and the credits move in one step (in the
 * outbox wrapper, with the audit event), so a call repeated after a lost answer adds nothing and
 * records nothing. KEYS: balance, every credit ever added, marker. ARGV: micros, marker TTL in
 * seconds. Returns { "ok", balance, 1 if the workspace was metered before (else 0) }, or
 * { "repeat", balance } when the id was seen.
 */
export const ADD_CREDITS_ONCE = `
if not redis.call("SET", KEYS[3], "1", "NX", "EX", ARGV[2]) then
  return { "repeat", tonumber(redis.call("GET", KEYS[1]) or "0") }
end
local was = redis.call("EXISTS", KEYS[1])
redis.call("INCRBY", KEYS[2], ARGV[1])
return { "ok", redis.call("INCRBY", KEYS[1], ARGV[1]), was }
`;

/**
 * Claims an idempotency id, or reads what holds it. KEYS: the record (a hash: f fingerprint,
 * t the claim's token while in progress, s and b the answer's status and body). ARGV:
 * fingerprint, token, claim TTL in ms. Reply: {} when claimed, else the record's HGETALL.
 */
export const CLAIM_IDEMPOTENCY = `
if redis.call("EXISTS", KEYS[1]) == 1 then return redis.call("HGETALL", KEYS[1]) end
redis.call("HSET", KEYS[1], "f", ARGV[1], "t", ARGV[2])
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return {}
`;

/**
 * Stores a claim's answer, if the claim is still the caller's (it did not expire and go to
 * another request). KEYS: the record. ARGV: token, status, body, TTL in ms. Reply: 1 stored, 0 lost.
 */
export const COMPLETE_IDEMPOTENCY = `
if redis.call("HGET", KEYS[1], "t") ~= ARGV[1] then return 0 end
redis.call("HDEL", KEYS[1], "t")
redis.call("HSET", KEYS[1], "s", ARGV[2], "b", ARGV[3])
redis.call("PEXPIRE", KEYS[1], ARGV[4])
return 1
`;

/** Frees a claim still held by the caller. KEYS: the record. ARGV: token. Reply: 1 freed, 0 not. */
export const RELEASE_IDEMPOTENCY = `
if redis.call("HGET", KEYS[1], "t") ~= ARGV[1] then return 0 end
return redis.call("DEL", KEYS[1])
`;

/**
 * Writes a workspace record. KEYS: workspace. ARGV: data, "xx" to write only over an existing
 * one (an update) or "" (a create). Returns 1 written, 0 missing.
 */
export const PUT_WORKSPACE = `
if ARGV[2] == "xx" and redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
redis.call("SET", KEYS[1], ARGV[1])
return 1
`;

/**
 * Adds credits (negative: removes). KEYS: balance, every credit ever added. ARGV: micros.
 * Returns { "ok", balance, 1 if the workspace was metered before (else 0) }.
 */
export const ADD_CREDITS = `
local was = redis.call("EXISTS", KEYS[1])
redis.call("INCRBY", KEYS[2], ARGV[1])
return { "ok", redis.call("INCRBY", KEYS[1], ARGV[1]), was }
`;
