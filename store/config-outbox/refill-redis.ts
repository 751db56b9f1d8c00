import { fromBinary } from "@bufbuild/protobuf";
import type { Cluster, Redis } from "ioredis";
import { defaultGuardrailId } from "../../domain/ids.js";
import { ApiKeySchema, WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { decodeFields, encodeFields } from "../guardrail-fields.js";
import { policyIdsOf } from "../policies/policy-ids.js";
import type { PolicyDoc } from "../policies/types.js";
import { RedisKeys } from "../redis-keys.js";
import type { AssignmentRecord } from "../types.js";
import type { DurableConfig } from "./durable-config.js";

function ms(ts: { seconds: bigint; nanos: number } | undefined): number {
  return ts ? Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6) : 0;
}

function buf(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** What a refill wrote back. */
export interface RefillCounts {
  workspaces: number;
  keys: number;
  guardrails: number;
  assignments: number;
  members: number;
  policyDocs: number;
  credits: number;
  usage: number;
}

/**
 * Writes the durable configuration into an emptied Redis with the layout the scripts use
 * (store/redis-keys.ts): the objects, their indexes and pointers, the default workspace's id,
 * credit balances and key usage. One command per key (each on its own slot: cluster-safe); every
 * write sets a value it could have set before, so two replicas refilling at once agree.
 */
export async function refillRedis(
  client: Redis | Cluster,
  prefix: string,
  config: DurableConfig,
): Promise<RefillCounts> {
  const k = new RedisKeys(prefix);
  const writes: Promise<unknown>[] = [];
  if (config.defaultWorkspace !== undefined) {
    writes.push(client.hset(k.org(), "default_ws", config.defaultWorkspace));
  }
  for (const w of config.workspaces) {
    const ws = fromBinary(WorkspaceSchema, w.data);
    writes.push(
      client.zadd(k.workspaces(), ms(ws.createdAt), ws.id),
      client.hset(k.slugs(), ws.slug, ws.id),
      client.set(k.workspace(ws.id), buf(w.data)),
      client.set(k.guardrailPointer(defaultGuardrailId(ws.id)), ws.id),
    );
  }
  for (const g of config.guardrails) {
    const guardrail = decodeFields([g.data], g.version);
    const key = k.guardrail(g.workspaceId, g.id);
    const fields = encodeFields(guardrail).flatMap(([n, bytes]) => [`f:${n}`, buf(bytes)]);
    writes.push(
      client.hset(key, ...fields, "v", g.version),
      client.zadd(k.guardrailIndex(g.workspaceId), ms(guardrail.createdAt), g.id),
      client.set(k.guardrailPointer(g.id), g.workspaceId),
    );
  }
  for (const key of config.keys) {
    const apiKey = fromBinary(ApiKeySchema, key.data);
    const created = ms(apiKey.createdAt);
    writes.push(
      client.set(k.key(key.scope, key.hash), buf(key.data)),
      client.zadd(k.keyIndex(key.scope), created, key.hash),
      client.set(k.keyPointer(key.hash), key.scope),
    );
    if (!apiKey.disabled) writes.push(client.zadd(k.enabledKeyIndex(key.scope), created, key.hash));
  }
  for (const a of config.assignments) {
    const rec = JSON.parse(a.record) as AssignmentRecord;
    writes.push(
      client.hset(k.assignments(a.workspaceId, a.kind), a.subject, a.record),
      client.zadd(k.assignmentIndex(a.workspaceId, a.kind), rec.createdAtMs, a.subject),
      client.zadd(
        k.guardrailAssignments(a.workspaceId, a.kind, rec.guardrailId),
        rec.createdAtMs,
        a.subject,
      ),
    );
  }
  for (const m of config.members) {
    writes.push(client.hset(k.members(m.workspaceId), m.userId, m.record));
  }
  for (const p of config.policyDocs) {
    writes.push(client.hset(k.policies(p.scope), "v", p.version, "doc", p.doc));
    // The index is rebuilt from the documents: the policies they hold are the ones that exist.
    const ids = policyIdsOf(JSON.parse(p.doc) as PolicyDoc);
    if (ids.length > 0)
      writes.push(client.hset(k.policyIndex(), ...ids.flatMap((id) => [id, p.scope])));
  }
  for (const c of config.credits) {
    writes.push(
      client.set(k.credits(c.workspaceId), c.addedMicros - c.spentMicros),
      client.set(k.creditsAdded(c.workspaceId), c.addedMicros),
    );
  }
  for (const u of config.usage) {
    if (u.creditTotalMicros > 0)
      writes.push(client.set(k.keySpend(u.workspaceId, u.keyHash), u.creditTotalMicros));
    if (u.byokTotalMicros > 0)
      writes.push(
        client.set(
          k.keyUsage(u.workspaceId, `keyusage:${u.keyHash}:byok:total`),
          u.byokTotalMicros,
        ),
      );
    for (const w of u.windows) {
      for (const [stem, amount] of [
        ["credit", w.creditMicros],
        ["byok", w.byokMicros],
      ] as const) {
        if (amount > 0) {
          writes.push(
            client.set(
              k.keyUsage(u.workspaceId, `keyusage:${u.keyHash}:${stem}:${w.id}`),
              amount,
              "EX",
              w.ttlSeconds,
            ),
          );
        }
      }
    }
  }
  await Promise.all(writes);
  return {
    workspaces: config.workspaces.length,
    keys: config.keys.length,
    guardrails: config.guardrails.length,
    assignments: config.assignments.length,
    members: config.members.length,
    policyDocs: config.policyDocs.length,
    credits: config.credits.length,
    usage: config.usage.length,
  };
}
