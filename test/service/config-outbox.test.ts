import { create, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { defaultGuardrailId, newId, newOrderedId } from "../../domain/ids.js";
import { ApiKeySchema, WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { applyConfigEntries } from "../../store/config-outbox/apply-sql.js";
import { ConfigOutboxDrainer } from "../../store/config-outbox/drainer.js";
import { type ConfigEntry, parseOutboxEntry } from "../../store/config-outbox/entry.js";
import { createRedisClient } from "../../store/open-store.js";
import type { AccountPolicy, StoredPolicy } from "../../store/policies/types.js";
import { defineCommands } from "../../store/redis-commands.js";
import { RedisKeys } from "../../store/redis-keys.js";
import { RedisStore } from "../../store/redis-store.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { ORG_SCOPE } from "../../store/types.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

const PREFIX = "rgt";
const k = new RedisKeys(PREFIX);

function auditEvent(id: string, workspaceId: string) {
  return {
    id,
    at: new Date().toISOString(),
    actor: { keyHash: "h".repeat(64), label: "rg-mgmt-...abcd", name: "ops" },
    action: "credits.add",
    resource: { type: "credits", id: workspaceId, label: "W" },
    workspaceId,
    changes: {},
    requestId: "req-1",
  };
}

async function count(db: SqlDatabase, sql: string, params: unknown[]): Promise<number> {
  const rows = await db.query<{ n: unknown }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

describe("store: the configuration outbox", () => {
  let redis: ThrowawayRedis;
  let client: Redis;
  let database: TestDatabase;

  before(async () => {
    redis = await startRedis();
    client = createRedisClient({
      redisUrl: redis.url,
      redisClusterNodes: undefined,
      redisCommandTimeoutMs: 5_000,
    }) as Redis;
    client.on("error", () => {});
    await client.connect();
    defineCommands(client);
    database = await createTestDatabase("embedded");
  });
  after(async () => {
    client?.disconnect();
    await redis?.stop();
    await database?.dispose();
  });

  describe("the script wrapper", () => {
    const ws = newId();
    const key = create(ApiKeySchema, {
      hash: "a".repeat(64),
      name: "app",
      createdAt: nowTimestamp(),
    });
    const data = Buffer.from(toBinary(ApiKeySchema, key));

    const createKey = (event: string) =>
      client.rgCreateKey(
        k.configOutbox(ws),
        k.workspace(ws),
        k.key(ws, key.hash),
        k.keyIndex(ws),
        k.enabledKeyIndex(ws),
        data,
        1000,
        key.hash,
        "0",
        "1",
        10,
        event,
        JSON.stringify([["k", key.hash]]),
      );

    it("runs the body with its own KEYS and ARGV, and appends the event with a snapshot only when it changed something", async () => {
      expect(await createKey(JSON.stringify({ defaultWorkspace: "x" }))).to.deep.equal(["ok"]);
      // The body saw its keys and arguments where it always did.
      expect(await client.getBuffer(k.key(ws, key.hash))).to.deep.equal(data);
      expect(await client.zscore(k.keyIndex(ws), key.hash)).to.equal("1000");
      // A refusal ("exists") changes nothing and records nothing.
      expect(await createKey(JSON.stringify({ defaultWorkspace: "y" }))).to.deep.equal(["exists"]);
      const entries = (await client.xrangeBuffer(k.configOutbox(ws), "-", "+")) as [
        Buffer,
        Buffer[],
      ][];
      expect(entries).to.have.length(1);
      const [id, fields] = entries[0] as [Buffer, Buffer[]];
      const entry = parseOutboxEntry(ws, id.toString(), fields);
      expect(entry.event).to.deep.equal({ defaultWorkspace: "x" });
      expect(entry.snapshots).to.deep.equal([
        { type: "key", hash: key.hash, data: new Uint8Array(data) },
      ]);
    });

    it("records nothing when the event is empty (no database attached)", async () => {
      const other = newId();
      const reply = await client.rgPutWorkspace(
        k.configOutbox(other),
        k.workspace(other),
        Buffer.from("w"),
        "",
        "",
        "[]",
      );
      expect(reply).to.equal(1);
      expect(await client.exists(k.configOutbox(other))).to.equal(0);
    });

    it("reads a tombstone for an object the change removed", async () => {
      expect(
        await client.rgDeleteKey(
          k.configOutbox(ws),
          k.key(ws, key.hash),
          k.keyIndex(ws),
          k.enabledKeyIndex(ws),
          k.assignments(ws, "key"),
          k.assignmentIndex(ws, "key"),
          key.hash,
          k.scopePrefix(ws),
          "{}",
          JSON.stringify([["k", key.hash]]),
        ),
      ).to.equal(1);
      const entries = (await client.xrangeBuffer(k.configOutbox(ws), "-", "+")) as [
        Buffer,
        Buffer[],
      ][];
      const [id, fields] = entries.at(-1) as [Buffer, Buffer[]];
      expect(parseOutboxEntry(ws, id.toString(), fields).snapshots).to.deep.equal([
        { type: "key", hash: key.hash, data: undefined },
      ]);
    });
  });

  describe("draining into the database", () => {
    it("stores an entry drained twice once (audit event and ledger row)", async () => {
      const ws = newId();
      const entry: ConfigEntry = {
        scope: ws,
        stamp: 1_000,
        event: {
          audit: auditEvent(newOrderedId(), ws),
          credits: {
            id: newOrderedId(),
            workspaceId: ws,
            amountMicros: 5_000_000,
            at: new Date().toISOString(),
          },
        },
        reply: [5_000_000, 0],
        snapshots: [{ type: "credits", balanceMicros: 5_000_000, addedMicros: 5_000_000 }],
      };
      await applyConfigEntries(database.db, [entry]);
      await applyConfigEntries(database.db, [entry]);
      expect(
        await count(database.db, "SELECT count(*) AS n FROM audit_events WHERE workspace_id = $1", [
          ws,
        ]),
      ).to.equal(1);
      expect(
        await count(
          database.db,
          "SELECT sum(amount_micros) AS n FROM config_credit_ledger WHERE workspace_id = $1",
          [ws],
        ),
      ).to.equal(5_000_000);
      // The balance comes from the script's reply, as the audit log always showed it.
      const rows = await database.db.query<{ changes: unknown }>(
        "SELECT changes FROM audit_events WHERE workspace_id = $1",
        [ws],
      );
      expect(rows[0]?.changes).to.deep.equal({
        amount_usd: { before: null, after: 5 },
        balance_usd: { before: null, after: 5 },
      });
    });

    it("never lets an older snapshot overwrite a newer one, nor bring back a deleted object", async () => {
      const ws = newId();
      const id = newId();
      const snap = (stamp: number, version: number, data?: Uint8Array): ConfigEntry => ({
        scope: ws,
        stamp,
        event: {},
        reply: [],
        snapshots: [{ type: "guardrail", id, version, data }],
      });
      await applyConfigEntries(database.db, [snap(2_000, 2, new Uint8Array([2]))]);
      await applyConfigEntries(database.db, [snap(1_000, 1, new Uint8Array([1]))]);
      const read = async () =>
        (
          await database.db.query<{ version: number; deleted: boolean }>(
            "SELECT version, deleted FROM config_guardrails WHERE id = $1",
            [id],
          )
        )[0];
      expect(await read()).to.deep.equal({ version: 2, deleted: false });
      await applyConfigEntries(database.db, [snap(3_000, 2)]);
      await applyConfigEntries(database.db, [snap(2_500, 2, new Uint8Array([2]))]);
      expect(await read()).to.deep.equal({ version: 2, deleted: true });
    });

    it("two drainers emptying the same outbox at once write each event once", async () => {
      const ws = newId();
      const ids = Array.from({ length: 30 }, () => newOrderedId());
      for (const id of ids) {
        await client.xadd(
          k.configOutbox(ws),
          "*",
          "e",
          JSON.stringify({ audit: auditEvent(id, ws) }),
          "r",
          "",
        );
      }
      const a = new ConfigOutboxDrainer(client, PREFIX, database.db);
      const b = new ConfigOutboxDrainer(client, PREFIX, database.db);
      await a.announce(ws);
      await Promise.all([a.drainAll(), b.drainAll(), a.drainScope(ws)]);
      expect(
        await count(database.db, "SELECT count(*) AS n FROM audit_events WHERE workspace_id = $1", [
          ws,
        ]),
      ).to.equal(ids.length);
      expect(await client.xlen(k.configOutbox(ws))).to.equal(0);
    });
  });
});

function policyOf(id: string, workspaceId: string): StoredPolicy {
  return {
    id,
    workspaceId,
    policyType: "budget",
    name: "Old budget",
    config: { limit_usd: 1, reset_interval: "daily", include_byok_in_budgets: false },
    apiKeyHashes: [],
    memberIds: ["ann"],
    isWorkspaceDefault: false,
    optedOutApiKeyHashes: [],
    optedOutMemberIds: [],
    updatedAtMs: 1_700_000_000_000,
  };
}

function accountPolicyOf(id: string): AccountPolicy {
  return {
    id,
    policyType: "model_availability",
    name: "Everyone",
    config: { enforce_zdr: true },
    isDefault: true,
    workspaceIds: [],
    optedOutWorkspaceIds: [],
    createdAtMs: 1_700_000_000_000,
    updatedAtMs: 1_700_000_000_000,
  };
}

describe("store: a Redis from before the outbox", () => {
  let redis: ThrowawayRedis;
  let database: TestDatabase;

  before(async () => {
    redis = await startRedis();
    database = await createTestDatabase("embedded");
  });
  after(async () => {
    await redis?.stop();
    await database?.dispose();
  });

  const open = async () => {
    const client = createRedisClient({
      redisUrl: redis.url,
      redisClusterNodes: undefined,
      redisCommandTimeoutMs: 5_000,
    });
    client.on("error", () => {});
    await client.connect();
    return new RedisStore(client, PREFIX);
  };

  it("is recorded in the database at the first check, so an emptying later loses nothing", async () => {
    const old = await open();
    const wsId = newId();
    const ws = create(WorkspaceSchema, {
      id: wsId,
      name: "Old",
      slug: "old",
      defaultGuardrailId: defaultGuardrailId(wsId),
      createdAt: nowTimestamp(),
    });
    expect(await old.bootstrapDefaultWorkspace(ws)).to.equal(wsId);
    const key = create(ApiKeySchema, {
      hash: "o".repeat(64),
      name: "old",
      workspaceId: wsId,
      createdAt: nowTimestamp(),
    });
    expect(await old.createKey(wsId, key)).to.equal("ok");
    expect(await old.addCredits(wsId, 3_000_000)).to.equal(3_000_000);
    const policies = old.openPolicyDocs();
    const doc = { policies: [policyOf("p-old", wsId)], managedTypes: ["budget" as const] };
    await policies.index("p-old", wsId);
    expect(await policies.write(wsId, 0, doc)).to.equal(true);
    const accountDoc = { policies: [], accountPolicies: [accountPolicyOf("a-old")] };
    await policies.index("a-old", ORG_SCOPE);
    expect(await policies.write(ORG_SCOPE, 0, accountDoc)).to.equal(true);
    await old.close();

    const upgraded = await open();
    upgraded.attachConfigLog(database.db);
    await upgraded.restoreConfig();
    await upgraded.close();
    await redis.flush();

    const after = await open();
    after.attachConfigLog(database.db);
    await after.restoreConfig();
    expect(await after.defaultWorkspaceId()).to.equal(wsId);
    expect((await after.getWorkspace(wsId))?.slug).to.equal("old");
    expect((await after.getKey(wsId, key.hash))?.name).to.equal("old");
    expect(await after.keyScope(key.hash)).to.equal(wsId);
    expect(await after.getCredits(wsId)).to.equal(3_000_000);
    const back = after.openPolicyDocs();
    expect(await back.read(wsId)).to.deep.equal({ doc, version: 1, guardrailWrites: 0 });
    expect(await back.read(ORG_SCOPE)).to.deep.include({ doc: accountDoc, version: 1 });
    expect(await back.workspaceOf("p-old")).to.equal(wsId);
    expect(await back.workspaceOf("a-old")).to.equal(ORG_SCOPE);
    await after.close();
  });
});
