import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { defaultGuardrailId, membershipId, newId } from "../../domain/ids.js";
import { COUNT_LIMITS, type CountLimits } from "../../domain/limits.js";
import { WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { isLimitReached } from "../../store/limits.js";
import { MemoryStore } from "../../store/memory-store.js";
import { RedisStore } from "../../store/redis-store.js";
import type { MemberRecord, Store } from "../../store/types.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

function workspace(slug: string) {
  const id = newId();
  return create(WorkspaceSchema, {
    id,
    name: slug,
    slug,
    defaultGuardrailId: defaultGuardrailId(id),
    createdAt: nowTimestamp(),
  });
}

function member(workspaceId: string, userId: string, createdAtMs = Date.now()): MemberRecord {
  const id = membershipId(workspaceId, userId);
  return { id, userId, workspaceId, role: "member", createdAtMs };
}

const SMALL: CountLimits = { ...COUNT_LIMITS, membersPerWorkspace: 3 };

/** Workspace members in the store: the embedded store behaves exactly like Redis. */
function membersContract(name: string, open: (limits?: CountLimits) => Promise<Store>) {
  describe(`Store: workspace members (${name})`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open(SMALL);
    });
    afterEach(async () => {
      await store.close();
    });

    it("adds each user once, keeps the first record, and lists them by time of addition", async () => {
      const ws = workspace(`m-${newId().slice(0, 8)}`);
      await store.createWorkspace(ws);
      const first = await store.addMembers(ws.id, [
        member(ws.id, "b", 1000),
        member(ws.id, "a", 2000),
      ]);
      expect(first).to.deep.equal({
        added: 2,
        members: [member(ws.id, "b", 1000), member(ws.id, "a", 2000)],
      });
      const again = await store.addMembers(ws.id, [
        member(ws.id, "a", 9000),
        member(ws.id, "a", 9001),
      ]);
      expect(again).to.deep.equal({ added: 0, members: [member(ws.id, "a", 2000)] });
      expect((await store.listMembers(ws.id)).map((m) => m.userId)).to.deep.equal(["b", "a"]);
      // Added together: by user id.
      await store.removeMembers(ws.id, ["b"]);
      await store.addMembers(ws.id, [member(ws.id, "d", 3000), member(ws.id, "c", 3000)]);
      const listed = (await store.listMembers(ws.id)).map((m) => m.userId);
      expect(listed).to.deep.equal(["a", "c", "d"]);
    });

    it("refuses an add past the limit as a whole, even concurrently, and removes what was there", async () => {
      const ws = workspace(`l-${newId().slice(0, 8)}`);
      await store.createWorkspace(ws);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.addMembers(ws.id, [member(ws.id, `u${i}`)])),
      );
      expect(results.filter((r) => !isLimitReached(r) && r !== "missing")).to.have.length(3);
      expect(results.find(isLimitReached)).to.deep.equal({ limit: 3, count: 3, adding: 1 });
      expect(await store.listMembers(ws.id)).to.have.length(3);
      const two = await store.addMembers(ws.id, [member(ws.id, "x"), member(ws.id, "y")]);
      expect(two).to.deep.equal({ limit: 3, count: 3, adding: 2 });
      const [kept] = await store.listMembers(ws.id);
      expect(await store.removeMembers(ws.id, [kept?.userId ?? "", "nobody"])).to.equal(1);
      expect(await store.removeMembers(ws.id, [kept?.userId ?? ""])).to.equal(0);
      expect(await store.listMembers(ws.id)).to.have.length(2);
    });

    it("answers missing for a workspace that does not exist, and deletes members with the workspace", async () => {
      expect(await store.addMembers(newId(), [member(newId(), "a")])).to.equal("missing");
      const ws = workspace(`d-${newId().slice(0, 8)}`);
      await store.createWorkspace(ws);
      await store.addMembers(ws.id, [member(ws.id, "a")]);
      expect(await store.deleteWorkspace(ws.id)).to.equal("ok");
      expect(await store.listMembers(ws.id)).to.deep.equal([]);
      // A workspace of the same id again (a restore) starts without them.
      await store.createWorkspace(ws);
      expect(await store.listMembers(ws.id)).to.deep.equal([]);
    });
  });
}

describe("Store: workspace members", () => {
  let redis: ThrowawayRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });
  membersContract("memory", async (limits) => new MemoryStore(limits));
  membersContract("redis", async (limits) => new RedisStore(redis.client(), "rgmembers", limits));
});
