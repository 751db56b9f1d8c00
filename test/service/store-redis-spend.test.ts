import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { defaultGuardrailId, newId } from "../../domain/ids.js";
import { WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { RedisKeys } from "../../store/redis-keys.js";
import { RedisStore } from "../../store/redis-store.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

/** How budget spend lies in Redis: one hash per guardrail and entity, one field per UTC day. */
describe("Redis store: budget spend counters", () => {
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

  it("keeps only the days a month can reach (and one for clock skew), and lives 33 days past its last charge", async () => {
    await redis.flush();
    const store = new RedisStore(redis.client(), "rg");
    const ws = newId();
    await store.createWorkspace(
      create(WorkspaceSchema, {
        id: ws,
        name: "w",
        slug: "w",
        defaultGuardrailId: defaultGuardrailId(ws),
        createdAt: nowTimestamp(),
      }),
    );
    // 40 consecutive days of one charge of 10 each, as daily windows.
    for (let day = 20_000; day < 20_040; day++) {
      const admitted = await store.admit({
        scope: ws,
        keyHash: "s".repeat(64),
        creditMicros: 0,
        keyMicros: 0,
        budgets: [
          {
            guardrailId: "g",
            entity: "key:s",
            firstDay: day,
            day,
            limitMicros: 100,
            amountMicros: 10,
          },
        ],
      });
      expect(admitted).to.deep.include({ ok: true });
    }
    const key = k.budgetSpend(ws, "g", "key:s");
    const days = (await raw.hkeys(key)).map(Number).sort((a, b) => a - b);
    // The last 32 days (20_008..20_039): a month, the longest window, reaches 31 back at most.
    expect(days[0]).to.equal(20_008);
    expect(days).to.have.length(32);
    const ttl = await raw.ttl(key);
    expect(ttl).to.be.within(32 * 86_400 + 1, 33 * 86_400);
    expect(
      await store.getSpend(ws, [
        { guardrailId: "g", entity: "key:s", firstDay: 20_009, lastDay: 20_039 },
      ]),
    ).to.deep.equal([310]);
    expect(
      await store.getSpend(ws, [
        { guardrailId: "g", entity: "key:s", firstDay: 20_000, lastDay: 20_039 },
      ]),
    ).to.deep.equal([320]);
  });
});
