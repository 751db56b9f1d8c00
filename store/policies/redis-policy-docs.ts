import type { Cluster, Redis } from "ioredis";
import { announced } from "./announced.js";
import type { PolicyDoc, PolicyDocStore, VersionedDoc } from "./types.js";

/**
 * Writes the document only when its version is still the one the caller read and, unless
 * ARGV[3] is "", the workspace's guardrail writes (`gw`, counted by the guardrail scripts in
 * the same hash: redis-scripts.ts) are still as many as the caller read.
 */
const WRITE_IF_VERSION = `
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return 0 end
if ARGV[3] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'gw') or '0') ~= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 'v', v + 1, 'doc', ARGV[2])
return 1
`;

/**
 * Policy documents in Redis: one hash per workspace (in the workspace's hash slot, beside its
 * other state) holding the document and its version; a separate hash indexes policy ids.
 */
export class RedisPolicyDocs implements PolicyDocStore {
  constructor(
    private readonly client: Redis | Cluster,
    private readonly prefix: string,
    /** Announces a workspace whose policies changed (the store's invalidation, to every replica). */
    private readonly changed: (workspaceId: string) => Promise<void>,
  ) {}

  private docKey(workspaceId: string): string {
    return `${this.prefix}:{w:${workspaceId}}:policies`;
  }

  private get indexKey(): string {
    return `${this.prefix}:policy-index`;
  }

  async read(workspaceId: string): Promise<VersionedDoc> {
    const [v, text, gw] = await this.client.hmget(this.docKey(workspaceId), "v", "doc", "gw");
    const guardrailWrites = Number(gw ?? 0);
    if (!text) return { doc: { policies: [] }, version: 0, guardrailWrites };
    return { doc: JSON.parse(text) as PolicyDoc, version: Number(v ?? 0), guardrailWrites };
  }

  async write(
    workspaceId: string,
    expectedVersion: number,
    doc: PolicyDoc,
    expectedGuardrailWrites?: number,
  ): Promise<boolean> {
    const done = await this.client.eval(
      WRITE_IF_VERSION,
      1,
      this.docKey(workspaceId),
      String(expectedVersion),
      JSON.stringify(doc),
      expectedGuardrailWrites === undefined ? "" : String(expectedGuardrailWrites),
    );
    if (done !== 1) return false;
    await this.changed(announced(workspaceId));
    return true;
  }

  async workspaceOf(policyId: string): Promise<string | undefined> {
    return (await this.client.hget(this.indexKey, policyId)) ?? undefined;
  }

  async index(policyId: string, workspaceId: string | undefined): Promise<void> {
    if (workspaceId === undefined) await this.client.hdel(this.indexKey, policyId);
    else await this.client.hset(this.indexKey, policyId, workspaceId);
  }
}
