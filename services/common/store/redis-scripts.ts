/**
 * Lua scripts: each runs atomically on one hash tag. Keys a script derives
 * itself (from an index) carry the same tag, which keeps them cluster-safe.
 */

/** KEYS: workspace, guardrail, index. ARGV: expectedVersion, data, createdAtMs, id, requireWorkspace */
export const PUT_GUARDRAIL = `
if ARGV[5] == "1" and redis.call("EXISTS", KEYS[1]) == 0 then return "missing-workspace" end
local cur = tonumber(redis.call("HGET", KEYS[2], "v") or "0")
if cur ~= tonumber(ARGV[1]) then return "conflict" end
redis.call("HSET", KEYS[2], "d", ARGV[2], "v", cur + 1)
redis.call("ZADD", KEYS[3], "NX", ARGV[3], ARGV[4])
return "ok"
`;

/** KEYS: guardrail, index, key assignments, member assignments. ARGV: id */
export const DELETE_GUARDRAIL = `
if redis.call("DEL", KEYS[1]) == 0 then return 0 end
redis.call("ZREM", KEYS[2], ARGV[1])
for i = 3, 4 do
  local all = redis.call("HGETALL", KEYS[i])
  for j = 1, #all, 2 do
    if cjson.decode(all[j + 1]).guardrailId == ARGV[1] then redis.call("HDEL", KEYS[i], all[j]) end
  end
end
return 1
`;

/** KEYS: workspace (unless org), key, index. ARGV: data, createdAtMs, hash, requireWorkspace */
export const CREATE_KEY = `
if ARGV[4] == "1" and redis.call("EXISTS", KEYS[1]) == 0 then return "missing-workspace" end
if redis.call("EXISTS", KEYS[2]) == 1 then return "exists" end
redis.call("SET", KEYS[2], ARGV[1])
redis.call("ZADD", KEYS[3], ARGV[2], ARGV[3])
return "ok"
`;

/** KEYS: key, index, key assignments. ARGV: hash */
export const DELETE_KEY = `
if redis.call("DEL", KEYS[1]) == 0 then return 0 end
redis.call("ZREM", KEYS[2], ARGV[1])
redis.call("HDEL", KEYS[3], ARGV[1])
return 1
`;

/**
 * KEYS: guardrail, assignments, then one subject check key per record (the
 * key record for key assignments; the guardrail again for members).
 * ARGV: guardrailId, then one JSON record per subject.
 * Subjects whose check key is gone are skipped; re-assigning the same
 * guardrail does not count.
 */
export const ASSIGN = `
if redis.call("EXISTS", KEYS[1]) == 0 then return -1 end
local n = 0
for i = 2, #ARGV do
  if redis.call("EXISTS", KEYS[i + 1]) == 1 then
    local rec = cjson.decode(ARGV[i])
    local old = redis.call("HGET", KEYS[2], rec.subject)
    if not old or cjson.decode(old).guardrailId ~= ARGV[1] then
      redis.call("HSET", KEYS[2], rec.subject, ARGV[i])
      n = n + 1
    end
  end
end
return n
`;

/** KEYS: assignments. ARGV: guardrailId, subjects... */
export const UNASSIGN = `
local n = 0
for i = 2, #ARGV do
  local old = redis.call("HGET", KEYS[1], ARGV[i])
  if old and cjson.decode(old).guardrailId == ARGV[1] then
    redis.call("HDEL", KEYS[1], ARGV[i])
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
export const LOAD_GOVERNANCE = `
local key = redis.call("GET", KEYS[1])
if not key then return {} end
local function guardrail(id)
  if not id or id == "" then return "" end
  return redis.call("HGET", ARGV[3] .. "g:" .. id, "d") or ""
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
 * assignments. ARGV: scope prefix.
 * Returns the deleted guardrail ids and key hashes (their global pointers are
 * removed by the caller), or nil when the workspace did not exist.
 */
export const DELETE_WORKSPACE = `
if redis.call("EXISTS", KEYS[1]) == 0 then return nil end
local gs = redis.call("ZRANGE", KEYS[2], 0, -1)
local ks = redis.call("ZRANGE", KEYS[3], 0, -1)
for _, id in ipairs(gs) do redis.call("DEL", ARGV[1] .. "g:" .. id) end
for _, h in ipairs(ks) do redis.call("DEL", ARGV[1] .. "k:" .. h) end
redis.call("DEL", KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return { gs, ks }
`;

/**
 * Admission: every check first, then every reservation, so a refused request
 * changes nothing. KEYS: rate, credits, key spend, then one spend counter per
 * budget. ARGV: rateLimit (0 = none), ms until the rate window ends, creditMicros,
 * keyLimitMicros (-1 = none), keyMicros, then limit, amount, ttl per budget.
 */
export const ADMIT = `
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
local klim = tonumber(ARGV[4])
local kamt = tonumber(ARGV[5])
-- A request that costs a counter nothing (free or BYOK) cannot exceed it.
if klim >= 0 and kamt > 0 then
  local spent = tonumber(redis.call("GET", KEYS[3]) or "0")
  if spent >= klim or spent + kamt > klim then return { "key-limit", spent } end
end
for i = 4, #KEYS do
  local base = 6 + (i - 4) * 3
  local limit = tonumber(ARGV[base])
  local amount = tonumber(ARGV[base + 1])
  if amount > 0 then
    local spent = tonumber(redis.call("GET", KEYS[i]) or "0")
    if spent >= limit or spent + amount > limit then return { "budget", i - 4, spent } end
  end
end
if rl > 0 and redis.call("INCR", KEYS[1]) == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
if metered and credit > 0 then redis.call("DECRBY", KEYS[2], credit) end
if kamt > 0 then redis.call("INCRBY", KEYS[3], kamt) end
for i = 4, #KEYS do
  local base = 6 + (i - 4) * 3
  redis.call("INCRBY", KEYS[i], ARGV[base + 1])
  redis.call("EXPIRE", KEYS[i], ARGV[base + 2])
end
return { "ok", metered and 1 or 0 }
`;

/**
 * Replaces reservations with real costs, once per admission id. KEYS: the
 * id's settled marker, credits, key spend, budget counters. ARGV: marker ttl
 * (0 = no id: always apply), metered (0/1), creditRefund, keyDelta, then one
 * delta per budget. Answers 0 when the id was already settled.
 */
export const SETTLE = `
if tonumber(ARGV[1]) > 0 and not redis.call("SET", KEYS[1], "1", "NX", "EX", ARGV[1]) then return 0 end
if ARGV[2] == "1" and tonumber(ARGV[3]) ~= 0 and redis.call("EXISTS", KEYS[2]) == 1 then
  redis.call("INCRBY", KEYS[2], ARGV[3])
end
if tonumber(ARGV[4]) ~= 0 then redis.call("INCRBY", KEYS[3], ARGV[4]) end
for i = 4, #KEYS do
  if tonumber(ARGV[i + 1]) ~= 0 and redis.call("EXISTS", KEYS[i]) == 1 then
    redis.call("INCRBY", KEYS[i], ARGV[i + 1])
  end
end
return 1
`;
