import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { defaultGuardrailId, hashSecret, newId } from "../../domain/ids.js";
import {
  ApiKeySchema,
  KeyKind,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { OperatorKey } from "../../services/account/operator-key.js";
import { createRedisClient } from "../../store/open-store.js";
import { RedisKeys } from "../../store/redis-keys.js";
import { RedisStore } from "../../store/redis-store.js";
import { ORG_SCOPE } from "../../store/types.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

/**
 * RAILGATE_MANAGEMENT_KEY is registered by every guardrail replica at start-up. Replicas that
 * start together race: the store claims a key's hash before it writes the key, so one replica
 * could find the hash taken and the key not yet there, and took it for a standard key's (a
 * start-up failure seen once in the scale-out suite).
 */
describe("operator key: replicas registering it at the same moment", () => {
  let redis: ThrowawayRedis;
  const clients: ReturnType<typeof createRedisClient>[] = [];

  async function openStore(prefix: string): Promise<RedisStore> {
    const client = createRedisClient({
      redisUrl: redis.url,
      redisClusterNodes: undefined,
      redisCommandTimeoutMs: 2000,
    });
    client.on("error", () => {});
    await client.connect();
    clients.push(client);
    return new RedisStore(client, prefix);
  }

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis?.stop();
  });

  it("four replicas at once, 25 times over: every one gets the management key, none fails", async () => {
    for (let round = 0; round < 25; round++) {
      const prefix = `race${round}`;
      const secret = `rg-admin-race-${round}-0123456789abcdef`;
      const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(prefix)));
      const keys = await Promise.all(stores.map((s) => new OperatorKey(s, secret).ensure()));
      for (const key of keys) {
        expect(key.hash).to.equal(hashSecret(secret));
        expect(key.kind).to.equal(KeyKind.MANAGEMENT);
      }
    }
  });

  it("waits for the key another replica has claimed and not yet written, instead of failing", async () => {
    // The moment between another replica's claim of the hash and its write of the key, held
    // open: on a Redis Cluster the two land on different nodes, so a replica can read between
    // them (one process on one Redis cannot show it on its own).
    const store = await openStore("claimed");
    const secret = "rg-admin-claimed-0123456789abcdef";
    const hash = hashSecret(secret);
    const pointer = new RedisKeys("claimed").keyPointer(hash);
    const raw = redis.client();
    try {
      await raw.set(pointer, ORG_SCOPE);
      let settled = false;
      const ensuring = new OperatorKey(store, secret).ensure().finally(() => {
        settled = true;
      });
      await sleep(200);
      expect(settled, "still waiting while the key is claimed and not written").to.equal(false);
      // The other replica's write lands (its claim taken back and made again with the key).
      await raw.del(pointer);
      const other = create(ApiKeySchema, {
        hash,
        name: "registered by another replica",
        kind: KeyKind.MANAGEMENT,
        createdAt: nowTimestamp(),
      });
      const written = await store.createKey(ORG_SCOPE, other);
      const key = await ensuring;
      expect(key.hash).to.equal(hash);
      expect(key.kind).to.equal(KeyKind.MANAGEMENT);
      // Whichever replica won, the organization has one management key of this hash.
      expect(["ok", "exists"]).to.include(written);
      expect((await store.getKey(ORG_SCOPE, hash))?.kind).to.equal(KeyKind.MANAGEMENT);
    } finally {
      raw.disconnect();
    }
  });

  it("still refuses a secret that a workspace's standard key already holds", async () => {
    const store = await openStore("taken");
    const secret = "rg-standard-already-0123456789abcdef";
    const ws = newId();
    await store.createWorkspace(
      create(WorkspaceSchema, {
        id: ws,
        name: ws,
        slug: ws,
        defaultGuardrailId: defaultGuardrailId(ws),
        createdAt: nowTimestamp(),
      }),
    );
    const standard = create(ApiKeySchema, {
      hash: hashSecret(secret),
      name: "a standard key",
      kind: KeyKind.STANDARD,
      createdAt: nowTimestamp(),
    });
    expect(await store.createKey(ws, standard)).to.equal("ok");
    const err = await new OperatorKey(store, secret).ensure().catch((e: unknown) => e);
    expect((err as Error).message).to.equal(
      "RAILGATE_MANAGEMENT_KEY is already in use by a standard key",
    );
  });
});
