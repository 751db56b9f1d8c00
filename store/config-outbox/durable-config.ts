import { budgetWindow, WINDOW_INTERVALS } from "../../domain/windows.js";
import { type KeyLimitInterval, usageWindow } from "../key-usage.js";
import type { SqlDatabase } from "../request-log/database.js";

/** Everything the configuration tables hold that is live (tombstones left out). */
export interface DurableConfig {
  /** Undefined: never recorded; "": the default workspace was deleted. */
  defaultWorkspace?: string;
  workspaces: { id: string; data: Uint8Array }[];
  keys: { hash: string; scope: string; data: Uint8Array }[];
  guardrails: { id: string; workspaceId: string; data: Uint8Array; version: number }[];
  assignments: { kind: "key" | "member"; workspaceId: string; subject: string; record: string }[];
  /** Added workspace members, each a MemberRecord's JSON. */
  members: { workspaceId: string; userId: string; record: string }[];
  /** Guardrail policy documents (a workspace's, or the account's under "org"), as JSON. */
  policyDocs: { scope: string; version: number; doc: string }[];
  /** Per workspace with a ledger: every credit added, and what the request log charged since. */
  credits: { workspaceId: string; addedMicros: number; spentMicros: number }[];
  /** Per key: its credit spend all-time and in each current window, and its BYOK spend. */
  usage: KeyUsageRebuilt[];
}

export interface KeyUsageRebuilt {
  workspaceId: string;
  keyHash: string;
  creditTotalMicros: number;
  byokTotalMicros: number;
  /** Per window of now (daily, weekly, monthly): its id, ttl and the spend inside it. */
  windows: {
    interval: KeyLimitInterval;
    id: string;
    ttlSeconds: number;
    creditMicros: number;
    byokMicros: number;
  }[];
}

/** Dollars as recorded (a double) back to the micro-dollars they were counted in. */
function micros(usd: unknown): number {
  return Math.round(Number(usd ?? 0) * 1_000_000);
}

function bytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(v as ArrayBufferLike);
}

/** True when the database holds any configuration at all (a first start has none). */
export async function hasDurableConfig(db: SqlDatabase): Promise<boolean> {
  const rows = await db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM config_workspaces) + (SELECT count(*) FROM config_api_keys)
       + (SELECT count(*) FROM config_org) + (SELECT count(*) FROM config_policy_docs) AS n`,
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Reads the configuration back, with the counters the request log lets us rebuild: credit
 * balances (ledger less the records' non-BYOK cost since the first top-up) and each key's
 * usage (all-time and in the current daily, weekly and monthly windows).
 */
export async function readDurableConfig(db: SqlDatabase, now: Date): Promise<DurableConfig> {
  const org = await db.query<{ value: string }>(
    "SELECT value FROM config_org WHERE name = 'default_workspace'",
  );
  const workspaces = await db.query<{ id: string; data: unknown }>(
    "SELECT id, data FROM config_workspaces WHERE NOT deleted ORDER BY id",
  );
  const keys = await db.query<{ hash: string; scope: string; data: unknown }>(
    "SELECT hash, scope, data FROM config_api_keys WHERE NOT deleted ORDER BY hash",
  );
  const guardrails = await db.query<{
    id: string;
    workspace_id: string;
    data: unknown;
    version: number;
  }>("SELECT id, workspace_id, data, version FROM config_guardrails WHERE NOT deleted ORDER BY id");
  const assignments = await db.query<{
    kind: "key" | "member";
    workspace_id: string;
    subject: string;
    record: unknown;
  }>(
    "SELECT kind, workspace_id, subject, record FROM config_assignments WHERE NOT deleted ORDER BY subject",
  );
  const members = await db.query<{ workspace_id: string; user_id: string; record: unknown }>(
    "SELECT workspace_id, user_id, record FROM config_workspace_members WHERE NOT deleted ORDER BY user_id",
  );
  const policyDocs = await db.query<{ scope: string; version: unknown; doc: unknown }>(
    "SELECT scope, version, doc FROM config_policy_docs WHERE NOT deleted ORDER BY scope",
  );
  const credits = await db.query<{ workspace_id: string; added: unknown; spent: unknown }>(
    `SELECT l.workspace_id, l.added,
       (SELECT coalesce(sum(g.cost_usd), 0) FROM generations g
         WHERE g.workspace_id = l.workspace_id AND NOT g.byok AND g.created_at >= l.first) AS spent
     FROM (SELECT workspace_id, sum(amount_micros) AS added, min(at) AS first
           FROM config_credit_ledger GROUP BY workspace_id) l`,
  );
  const starts = WINDOW_INTERVALS.map((i) => budgetWindow(i, now).start);
  const usage = await db.query<{
    workspace_id: string;
    key_hash: string;
    byok: boolean;
    total: unknown;
    w0: unknown;
    w1: unknown;
    w2: unknown;
  }>(
    `SELECT workspace_id, key_hash, byok, sum(cost_usd) AS total,
       coalesce(sum(cost_usd) FILTER (WHERE created_at >= $1), 0) AS w0,
       coalesce(sum(cost_usd) FILTER (WHERE created_at >= $2), 0) AS w1,
       coalesce(sum(cost_usd) FILTER (WHERE created_at >= $3), 0) AS w2
     FROM generations WHERE cost_usd > 0 GROUP BY workspace_id, key_hash, byok`,
    starts,
  );
  const perKey = new Map<string, KeyUsageRebuilt>();
  for (const r of usage) {
    const id = `${r.workspace_id}/${r.key_hash}`;
    let u = perKey.get(id);
    if (!u) {
      u = {
        workspaceId: r.workspace_id,
        keyHash: r.key_hash,
        creditTotalMicros: 0,
        byokTotalMicros: 0,
        windows: WINDOW_INTERVALS.map((interval) => ({
          interval,
          ...usageWindow(interval, now),
          creditMicros: 0,
          byokMicros: 0,
        })),
      };
      perKey.set(id, u);
    }
    const spent = [r.w0, r.w1, r.w2].map(micros);
    if (r.byok) u.byokTotalMicros += micros(r.total);
    else u.creditTotalMicros += micros(r.total);
    u.windows.forEach((w, i) => {
      if (r.byok) w.byokMicros += spent[i] ?? 0;
      else w.creditMicros += spent[i] ?? 0;
    });
  }
  return {
    defaultWorkspace: org[0]?.value,
    workspaces: workspaces.map((r) => ({ id: r.id, data: bytes(r.data) })),
    keys: keys.map((r) => ({ hash: r.hash, scope: r.scope, data: bytes(r.data) })),
    guardrails: guardrails.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      data: bytes(r.data),
      version: Number(r.version),
    })),
    assignments: assignments.map((r) => ({
      kind: r.kind,
      workspaceId: r.workspace_id,
      subject: r.subject,
      record: typeof r.record === "string" ? r.record : JSON.stringify(r.record),
    })),
    members: members.map((r) => ({
      workspaceId: r.workspace_id,
      userId: r.user_id,
      record: typeof r.record === "string" ? r.record : JSON.stringify(r.record),
    })),
    policyDocs: policyDocs.map((r) => ({
      scope: r.scope,
      version: Number(r.version),
      doc: typeof r.doc === "string" ? r.doc : JSON.stringify(r.doc),
    })),
    credits: credits.map((r) => ({
      workspaceId: r.workspace_id,
      addedMicros: Number(r.added),
      spentMicros: micros(r.spent),
    })),
    usage: [...perKey.values()],
  };
}
