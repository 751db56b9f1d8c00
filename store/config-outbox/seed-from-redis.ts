import type { Cluster, Redis } from "ioredis";
import { RedisKeys } from "../redis-keys.js";
import type { SqlDatabase } from "../request-log/database.js";
import { ORG_SCOPE } from "../types.js";
import { applyConfigEntries } from "./apply-sql.js";
import type { ConfigEntry, Snapshot } from "./entry.js";

/** Older than any outbox entry: a seeded row only fills a gap, it never replaces a recorded one. */
const SEED_STAMP = 1;

function guardrailBytes(raw: Buffer[]): { data: Buffer; version: number } | undefined {
  const parts: Buffer[] = [];
  let version = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString();
    if (name === "v") version = Number((raw[i + 1] as Buffer).toString());
    else if (name.startsWith("f:")) parts.push(raw[i + 1] as Buffer);
  }
  return parts.length === 0 ? undefined : { data: Buffer.concat(parts), version };
}

/**
 * Copies into the configuration tables what a Redis from before the outbox holds and the
 * database lacks: every workspace, key, guardrail, assignment, added member and policy document
 * (the account's too), the default workspace's id, and each metered workspace's balance as an
 * opening ledger row (from which later charges count). Rows already recorded are left alone,
 * so running it again changes nothing.
 */
export async function seedFromRedis(
  client: Redis | Cluster,
  prefix: string,
  db: SqlDatabase,
): Promise<number> {
  const k = new RedisKeys(prefix);
  const workspaces = await client.zrange(k.workspaces(), 0, -1);
  const entries: ConfigEntry[] = [];
  const defaultWs = await client.hget(k.org(), "default_ws");
  const at = new Date().toISOString();
  for (const scope of [ORG_SCOPE, ...workspaces]) {
    const snapshots: Snapshot[] = [];
    if (scope !== ORG_SCOPE) {
      const ws = await client.getBuffer(k.workspace(scope));
      if (ws) snapshots.push({ type: "workspace", id: scope, data: new Uint8Array(ws) });
      for (const id of await client.zrange(k.guardrailIndex(scope), 0, -1)) {
        const g = guardrailBytes(
          (await client.callBuffer("HGETALL", k.guardrail(scope, id))) as Buffer[],
        );
        if (g)
          snapshots.push({
            type: "guardrail",
            id,
            version: g.version,
            data: new Uint8Array(g.data),
          });
      }
      for (const kind of ["key", "member"] as const) {
        const all = await client.hgetall(k.assignments(scope, kind));
        for (const [subject, record] of Object.entries(all)) {
          snapshots.push({ type: "assignment", kind, subject, record });
        }
      }
      for (const [userId, record] of Object.entries(await client.hgetall(k.members(scope)))) {
        snapshots.push({ type: "member", userId, record });
      }
    }
    const [version, doc] = await client.hmget(k.policies(scope), "v", "doc");
    if (doc) snapshots.push({ type: "policies", version: Number(version ?? 0), doc });
    for (const hash of await client.zrange(k.keyIndex(scope), 0, -1)) {
      const key = await client.getBuffer(k.key(scope, hash));
      if (key) snapshots.push({ type: "key", hash, data: new Uint8Array(key) });
    }
    // An opening row only for a workspace the ledger knows nothing of: its recorded top-ups
    // already tell its balance.
    const recorded =
      scope === ORG_SCOPE ||
      (
        await db.query("SELECT 1 FROM config_credit_ledger WHERE workspace_id = $1 LIMIT 1", [
          scope,
        ])
      ).length > 0;
    const balance = recorded ? null : await client.get(k.credits(scope));
    entries.push({
      scope,
      stamp: SEED_STAMP,
      event: {
        ...(scope === ORG_SCOPE && defaultWs !== null ? { defaultWorkspace: defaultWs } : {}),
        ...(balance !== null
          ? {
              credits: {
                id: `opening:${scope}`,
                workspaceId: scope,
                amountMicros: Number(balance),
                at,
              },
            }
          : {}),
      },
      reply: [],
      snapshots,
    });
  }
  await applyConfigEntries(db, entries);
  return entries.reduce((n, e) => n + e.snapshots.length, 0);
}
