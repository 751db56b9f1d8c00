/**
 * The outbox wrapper every management script runs in. KEYS[1] is the scope's outbox (the
 * stream `<prefix>:{w:<scope>}:outbox-cfg`, on the script's own hash tag, so it stays
 * Redis-Cluster-safe); the last two ARGV are the event's JSON and the snapshot spec (JSON list,
 * see SnapshotSpec). The wrapper takes them off before the body runs, so the body reads its
 * KEYS and ARGV at the indexes it always did, and may build the scope's key names from SCOPE
 * (the outbox's prefix: `<prefix>:{w:<scope>}:`). When the body's reply means a change (a number
 * above 0, or a table whose status is "ok") and the event is not empty, the event, the reply's
 * numbers and a snapshot of each named object as it is now go to the outbox in the same atomic
 * step: a change acknowledged is a change whose audit event and state are recorded.
 */
export const OUTBOX_SUFFIX = "outbox-cfg";

const WRAPPER_HEAD = `
local OUTBOX = table.remove(KEYS, 1)
local SCOPE = string.sub(OUTBOX, 1, #OUTBOX - ${OUTBOX_SUFFIX.length})
local SNAPS = table.remove(ARGV)
local EVENT = table.remove(ARGV)
local function rg_body()
`;

const WRAPPER_TAIL = `
end
local rg_reply = rg_body()
local function rg_changed(r)
  if type(r) == "number" then return r > 0 end
  return type(r) == "table" and r[1] == "ok"
end
if EVENT ~= "" and rg_changed(rg_reply) then
  local P = SCOPE
  local nums = {}
  if type(rg_reply) == "number" then nums[1] = tostring(rg_reply)
  else
    for i = 2, #rg_reply do
      if type(rg_reply[i]) == "number" then nums[#nums + 1] = tostring(rg_reply[i]) end
    end
  end
  local f = { "e", EVENT, "r", table.concat(nums, ",") }
  local function add(name, value)
    f[#f + 1] = name
    f[#f + 1] = value or ""
  end
  for _, s in ipairs(cjson.decode(SNAPS)) do
    local t = s[1]
    if t == "ws" then add("ws:" .. s[2], redis.call("GET", P .. "ws"))
    elseif t == "k" then add("k:" .. s[2], redis.call("GET", P .. "k:" .. s[2]))
    elseif t == "a" then add("a:" .. s[2] .. ":" .. s[3], redis.call("HGET", P .. s[2], s[3]))
    elseif t == "m" then add("m:" .. s[2], redis.call("HGET", P .. "wm", s[2]))
    elseif t == "p" then
      local doc = redis.call("HMGET", P .. "policies", "doc", "v")
      add("p", doc[1])
      add("pv", doc[2])
    elseif t == "c" then
      add("c", redis.call("GET", P .. "credits"))
      add("ca", redis.call("GET", P .. "credits-added"))
    elseif t == "g" then
      local all = redis.call("HGETALL", P .. "g:" .. s[2])
      local parts = {}
      local v = "0"
      for j = 1, #all, 2 do
        if string.sub(all[j], 1, 2) == "f:" then parts[#parts + 1] = all[j + 1]
        elseif all[j] == "v" then v = all[j + 1] end
      end
      add("g:" .. s[2], table.concat(parts))
      add("gv:" .. s[2], v)
    end
  end
  redis.call("XADD", OUTBOX, "*", unpack(f))
end
return rg_reply
`;

/** A management script's body inside the outbox wrapper. */
export function withConfigOutbox(body: string): string {
  return `${WRAPPER_HEAD}${body}${WRAPPER_TAIL}`;
}
