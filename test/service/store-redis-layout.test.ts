import { clone, create, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import type { Redis } from "ioredis";
import {
  ApiKeySchema,
  KeyKind,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import { GuardrailSchema, StringListSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { defaultGuardrailId, hashSecret, newId } from "../../platform/ids.js";
import { nowTimestamp } from "../../platform/time.js";
import { RedisKeys } from "../../store/redis-keys.js";
import { RedisStore } from "../../store/redis-store.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

/**
 * Data written before guardrails were stored field by field and before the
 * enabled-key and assignment indexes existed must keep working: read as it
 * is, converted when patched, indexed the first time a list needs it.
 */
describe("Redis store: data of the earlier layout", () => {
  let redis: ThrowawayRedis;
  let raw: Redis;
  const k = new RedisKeys("rg");

  before(async () => {
    redis = await startRedis();
    raw = redis.client();
  });
  after(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  async function setup() {
    await redis.flush();
    const store = new RedisStore(redis.client(), "rg");
    const id = newId();
    const ws = create(WorkspaceSchema, {
      id,
      name: "w",
      slug: "w",
      defaultGuardrailId: defaultGuardrailId(id),
      createdAt: nowTimestamp(),
    });
    await store.createWorkspace(ws);
    return { store, ws: id };
  }

  it("reads, governs with and patches a guardrail stored whole", async () => {
    const { store, ws } = await setup();
    const g = create(GuardrailSchema, {
      id: newId(),
      workspaceId: ws,
      name: "legacy",
      description: "old",
      allowedModels: create(StringListSchema, { values: ["a/b", "c/d"] }),
      limitUsd: 2.5,
      createdAt: nowTimestamp(),
      version: 3n,
    });
    const whole = Buffer.from(toBinary(GuardrailSchema, g));
    await raw.hset(k.guardrail(ws, g.id), "d", whole, "v", "3");
    await raw.zadd(k.guardrailIndex(ws), Date.now(), g.id);
    await raw.set(k.guardrailPointer(g.id), ws);

    const read = await store.getGuardrail(ws, g.id);
    expect(read?.version).to.equal(3);
    expect(read?.value.allowedModels?.values).to.deep.equal(["a/b", "c/d"]);
    const key = create(ApiKeySchema, {
      hash: hashSecret(newId()),
      name: "k",
      kind: KeyKind.STANDARD,
      workspaceId: ws,
      createdAt: nowTimestamp(),
    });
    await store.createKey(ws, key);
    const a = {
      id: newId(),
      subject: key.hash,
      guardrailId: g.id,
      workspaceId: ws,
      assignedBy: "t",
      createdAtMs: Date.now(),
    };
    await store.assign("key", [a]);
    expect((await store.loadGovernance(key.hash))?.keyGuardrail?.name).to.equal("legacy");

    if (!read) throw new Error("not read");
    const next = clone(GuardrailSchema, read.value);
    next.name = "patched";
    const patched = await store.patchGuardrail({
      workspaceId: ws,
      id: g.id,
      readVersion: 3,
      fields: ["name"],
      next,
      unchanged: ["limit_usd"],
      read: read.value,
      materialize: false,
    });
    expect(patched).to.not.be.a("string");
    const stored = await raw.hgetall(k.guardrail(ws, g.id));
    expect(stored).to.not.have.property("d");
    expect(Object.keys(stored).filter((f) => f.startsWith("f:")).length).to.be.greaterThan(4);
    const after = await store.getGuardrail(ws, g.id);
    expect(after?.version).to.equal(4);
    expect(after?.value.name).to.equal("patched");
    expect(after?.value.description).to.equal("old");
    expect(after?.value.allowedModels?.values).to.deep.equal(["a/b", "c/d"]);
    expect(after?.value.limitUsd).to.equal(2.5);
    expect((await store.loadGovernance(key.hash))?.keyGuardrail?.name).to.equal("patched");
    await store.close();
  });

  it("builds the enabled-key and assignment indexes of older data the first time they are needed", async () => {
    const { store, ws } = await setup();
    const g = create(GuardrailSchema, {
      id: newId(),
      workspaceId: ws,
      name: "g",
      createdAt: nowTimestamp(),
    });
    await store.createGuardrail(g);
    const keys = [];
    for (let i = 0; i < 4; i++) {
      const key = create(ApiKeySchema, {
        hash: hashSecret(newId()),
        name: `k${i}`,
        kind: KeyKind.STANDARD,
        workspaceId: ws,
        createdAt: nowTimestamp(),
      });
      await store.createKey(ws, key);
      keys.push(key);
    }
    const off = keys[1];
    if (!off) throw new Error("no key");
    off.disabled = true;
    await store.putKey(ws, off);
    const at = (subject: string) => ({
      id: newId(),
      subject,
      guardrailId: g.id,
      workspaceId: ws,
      assignedBy: "t",
      createdAtMs: Date.now(),
    });
    await store.assign("key", [at(keys[0]?.hash ?? ""), at(keys[2]?.hash ?? "")]);
    await store.assign("member", [at("m1"), at("m2")]);
    await store.close();
    // As the earlier layout left them: records only, no indexes, no marker.
    await raw.del(
      k.layout(ws),
      k.enabledKeyIndex(ws),
      k.assignmentIndex(ws, "key"),
      k.assignmentIndex(ws, "member"),
      k.guardrailAssignments(ws, "key", g.id),
      k.guardrailAssignments(ws, "member", g.id),
    );

    const fresh = new RedisStore(redis.client(), "rg");
    const enabled = await fresh.listKeys(ws, 0, 10, true);
    expect(enabled.total).to.equal(3);
    expect(enabled.items.map((x) => x.hash)).to.not.include(off.hash);
    expect((await fresh.listAssignments("member", ws, g.id, 0, 10)).total).to.equal(2);
    expect((await fresh.listAssignments("key", ws, undefined, 0, 10)).total).to.equal(2);
    // Deleting the guardrail finds its assignments through the rebuilt indexes.
    expect(await fresh.deleteGuardrail(ws, g.id)).to.equal(true);
    expect(await raw.hlen(k.assignments(ws, "member"))).to.equal(0);
    expect(await raw.hlen(k.assignments(ws, "key"))).to.equal(0);
    await fresh.close();
  });
});
