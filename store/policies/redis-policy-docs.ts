import type { Cluster, Redis } from "ioredis";
import type { AuditNote } from "../config-outbox/entry.js";
import { withConfigOutbox } from "../config-outbox/outbox-lua.js";
import { RedisKeys } from "../redis-keys.js";
import { announced } from "./announced.js";
import type { PolicyDoc, PolicyDocStore, VersionedDoc } from "./types.js";

/**
 * Writes the document only when its version is still the one the caller read and, unless
 * ARGV[3] is "", the workspace's guardrail writes (`gw`, counted by the guardrail scripts in
 * the same hash: redis-scripts.ts) are still as many as the caller read. In the outbox wrapper:
 * the document written and its new version go to the scope's outbox in the same atomic step.
 */
const WRITE_IF_VERSION = withConfigOutbox(`
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return 0 end
if ARGV[3] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'gw') or '0') ~= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 'v', v + 1, 'doc', ARGV[2])
return 1
`);

/**
 * Runs a write script in its scope's outbox wrapper (the store's: it records the entry, then
 * drains it before the write answers, when the database answers quickly).
 */
export type PolicyOutbox = (
  scope: string,
  audit: AuditNote | undefined,
  run: (outbox: string, event: string, snapshots: string) => Promise<unknown>,
) => Promise<unknown>;

/**
 * Policy documents in Redis: one hash per workspace (in the workspace's hash slot, beside its
 * other state) holding the document and its version; a separate hash indexes policy ids.
 */
export class RedisPolicyDocs implements PolicyDocStore {
  private readonly k: RedisKeys;

  constructor(
    private readonly client: Redis | Cluster,
    prefix: string,
    /** Announces a workspace whose policies changed (the store's invalidation, to every replica). */
    private readonly changed: (workspaceId: string) => Promise<void>,
    private readonly outboxed: PolicyOutbox,
  ) {
    this.k = new RedisKeys(prefix);
  }

  async read(workspaceId: string): Promise<VersionedDoc> {
    const [v, text, gw] = await this.client.hmget(this.k.policies(workspaceId), "v", "doc", "gw");
    const guardrailWrites = Number(gw ?? 0);
    if (!text) return { doc: { policies: [] }, version: 0, guardrailWrites };
    return { doc: JSON.parse(text) as PolicyDoc, version: Number(v ?? 0), guardrailWrites };
  }

  async write(
    workspaceId: string,
    expectedVersion: number,
    doc: PolicyDoc,
    expectedGuardrailWrites?: number,
    audit?: AuditNote,
  ): Promise<boolean> {
    const done = await this.outboxed(workspaceId, audit, (outbox, event, snapshots) =>
      this.client.eval(
        WRITE_IF_VERSION,
        2,
        outbox,
        this.k.policies(workspaceId),
        String(expectedVersion),
        JSON.stringify(doc),
        expectedGuardrailWrites === undefined ? "" : String(expectedGuardrailWrites),
        event,
        snapshots,
      ),
    );
    if (done !== 1) return false;
    await this.changed(announced(workspaceId));
    return true;
  }

  async workspaceOf(policyId: string): Promise<string | undefined> {
    return (await this.client.hget(this.k.policyIndex(), policyId)) ?? undefined;
  }

  async index(policyId: string, workspaceId: string | undefined): Promise<void> {
    if (workspaceId === undefined) await this.client.hdel(this.k.policyIndex(), policyId);
    else await this.client.hset(this.k.policyIndex(), policyId, workspaceId);
  }
}
