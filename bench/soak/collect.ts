import type { Cluster, Redis } from "ioredis";
import { MANAGEMENT_KEY } from "../../test/kit/system.js";
import { send } from "./http.js";
import {
  type AuditObservation,
  type CreditsObservation,
  type KeyUsageObservation,
  micros,
  type RecordObservation,
  type ReservationObservation,
} from "./observations.js";
import type { SoakWorld } from "./world.js";

/** What the system holds once the load has stopped. */
export interface Holdings {
  records: RecordObservation[];
  events: AuditObservation[];
  keys: KeyUsageObservation[];
  credits: CreditsObservation[];
  reservations: ReservationObservation[];
  /** Whether any workspace had a reservation registry key in Redis. */
  registry: boolean;
  atMs: number;
}

/** The store's key prefix (RAILGATE_REDIS_PREFIX's default) and the registry's suffix. */
const RESERVATIONS = (workspaceId: string) => `rg:{w:${workspaceId}}:resv-i`;

/** GET with the management key, retried while the system is still settling. */
async function get<T>(baseUrl: string, path: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const a = await send(baseUrl, "GET", path, { token: MANAGEMENT_KEY });
    if (a.status === 200) return a.body as T;
    if (attempt >= 10) throw new Error(`GET ${path}: ${a.status} ${JSON.stringify(a.body)}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** Every page of a cursor-paged list. */
async function allPages<T>(baseUrl: string, path: string): Promise<T[]> {
  const all: T[] = [];
  let cursor = "";
  for (;;) {
    const sep = path.includes("?") ? "&" : "?";
    const page = await get<{ data: T[]; next_cursor: string | null }>(
      baseUrl,
      `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    all.push(...page.data);
    if (!page.next_cursor) return all;
    cursor = page.next_cursor;
  }
}

/**
 * Whether any of the workspaces has a reservation registry right now. Sampled during the load
 * too: a registry emptied by settlement may have no key left by the end.
 */
export async function registryExists(
  redis: Redis | Cluster,
  workspaceIds: string[],
): Promise<boolean> {
  for (const id of workspaceIds) {
    if ((await redis.exists(RESERVATIONS(id))) > 0) return true;
  }
  return false;
}

export async function collect(
  baseUrl: string,
  world: SoakWorld,
  redis: Redis | Cluster,
  since: Date,
): Promise<Holdings> {
  const records: RecordObservation[] = [];
  const keys: KeyUsageObservation[] = [];
  for (const key of world.keys) {
    const listed = await allPages<{ id: string; cost_usd: number }>(
      baseUrl,
      `/api/v1/generations?key_hash=${key.hash}`,
    );
    for (const r of listed) {
      records.push({
        id: r.id,
        keyHash: key.hash,
        workspaceId: key.workspaceId,
        costMicros: micros(r.cost_usd),
      });
    }
    const k = await get<{ data: { usage: number } }>(baseUrl, `/api/v1/keys/${key.hash}`);
    keys.push({ keyHash: key.hash, usageMicros: micros(k.data.usage) });
  }
  const credits: CreditsObservation[] = [];
  for (const id of world.meteredWorkspaceIds) {
    const c = await get<{ data: { total_credits: number; balance_usd: number | null } }>(
      baseUrl,
      `/api/v1/workspaces/${id}/credits`,
    );
    credits.push({
      workspaceId: id,
      addedMicros: micros(c.data.total_credits),
      balanceMicros: micros(c.data.balance_usd ?? 0),
    });
  }
  const events = (
    await allPages<{ id: string; request_id: string | null; action: string }>(
      baseUrl,
      `/api/v1/audit-log?from=${since.toISOString()}`,
    )
  ).map((e) => ({ id: e.id, requestId: e.request_id, action: e.action }));
  const reservations: ReservationObservation[] = [];
  let registry = false;
  for (const id of world.workspaceIds) {
    const key = RESERVATIONS(id);
    if ((await redis.exists(key)) === 0) continue;
    registry = true;
    const flat = await redis.zrange(key, 0, -1, "WITHSCORES");
    for (let i = 0; i + 1 < flat.length; i += 2) {
      reservations.push({
        workspaceId: id,
        admissionId: flat[i] as string,
        leaseExpiryMs: Number(flat[i + 1]),
      });
    }
  }
  return { records, events, keys, credits, reservations, registry, atMs: Date.now() };
}
