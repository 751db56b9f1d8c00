import { expect } from "chai";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { Api, type JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** Callers writing at once (top-ups and guardrail updates), and the answers before the kill. */
const WRITERS = 16;
const ACKNOWLEDGED_BEFORE_KILL = 200;

/**
 * Destructive: kills the guardrail process hard right after its acknowledgements and empties
 * the Redis underneath the split system, on a Redis and a PostgreSQL database of its own.
 */
describe("faults: configuration and audit survive a killed guardrail process and an emptied Redis", function () {
  this.timeout(240_000);
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let system: SplitSystem | undefined;
  let env: Record<string, string>;

  const stop = async () => {
    const running = system;
    system = undefined;
    await running?.stop();
  };
  const start = async () => {
    system = await startSplitSystem(redis.url, env, { logLevel: "warn" });
    return new Api(system.baseUrl(), MANAGEMENT_KEY);
  };

  before(async () => {
    redis = await startRedis();
    database = await createTestDatabase("postgres");
    if (!database.url) throw new Error("the postgres test database has no URL");
    env = { DATABASE_URL: database.url, RAILGATE_CONFIG_REFILL: "on" };
  });
  after(async () => {
    await stop();
    await redis?.stop();
    await database?.dispose();
  });

  const write = async (
    api: Api,
    method: string,
    path: string,
    body: unknown,
    requestId: string,
  ): Promise<JsonResponse> =>
    api.request(method, path, body, { headers: { "x-request-id": requestId } });

  it("keeps every acknowledged write's audit event and brings every object back after Redis is emptied", async () => {
    let admin = await start();
    const defaults = await admin.get("/api/v1/workspaces");
    expectStatus(defaults, 200);
    const defaultId = defaults.body.data.find((w: { is_default: boolean }) => w.is_default).id;

    const ws = await write(admin, "POST", "/api/v1/workspaces", { name: "Durable" }, "d-ws");
    expectStatus(ws, 201);
    const wsId: string = ws.body.data.id;
    const key = await write(
      admin,
      "POST",
      "/api/v1/keys",
      { name: "app", workspace_id: wsId, member_user_id: "user_1" },
      "d-key",
    );
    expectStatus(key, 201);
    const secret: string = key.body.key;
    const hash: string = key.body.data.hash;
    const g = await write(
      admin,
      "POST",
      "/api/v1/guardrails",
      { name: "Team", workspace_id: wsId, limit_usd: 50, reset_interval: "monthly" },
      "d-g",
    );
    expectStatus(g, 201);
    const gId: string = g.body.data.id;
    const assigned = await write(
      admin,
      "POST",
      `/api/v1/guardrails/${gId}/assignments/keys`,
      { key_hashes: [hash] },
      "d-assign",
    );
    expectStatus(assigned, 200);
    const members = await write(
      admin,
      "POST",
      `/api/v1/guardrails/${gId}/assignments/members`,
      { member_user_ids: ["user_1"] },
      "d-members",
    );
    expectStatus(members, 200);

    // Writes at a high rate from several callers; the guardrail process is killed while they
    // run, right after the acknowledgements counted: every answer that said 2xx is acknowledged.
    const acknowledged = ["d-ws", "d-key", "d-g", "d-assign", "d-members"];
    let toppedUp = 0;
    let killed = false;
    let sent = 0;
    const worker = async () => {
      while (!killed) {
        const i = sent++;
        const credits = i % 2 === 0;
        const id = credits ? `d-c${i}` : `d-u${i}`;
        const res = await (credits
          ? write(admin, "POST", `/api/v1/workspaces/${wsId}/credits`, { amount_usd: 1 }, id)
          : write(admin, "PATCH", `/api/v1/guardrails/${gId}`, { description: `v${i}` }, id)
        ).catch(() => undefined);
        // An answer that arrives after the kill was still sent before it: acknowledged too.
        if (!res || res.status >= 300) continue;
        acknowledged.push(id);
        if (credits) toppedUp++;
        if (!killed && acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL) {
          killed = true;
          system?.guardrail.process.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, worker));
    expect(toppedUp).to.be.greaterThan(0);
    await stop();

    // A new guardrail process drains what the dead one left in Redis.
    admin = await start();
    const recorded = await pollUntil(
      async () => {
        const ids = new Set<string>();
        let cursor: string | null = null;
        do {
          const res: JsonResponse = await admin.get(
            `/api/v1/audit-log?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
          );
          expectStatus(res, 200);
          for (const e of res.body.data) if (e.request_id) ids.add(e.request_id);
          cursor = res.body.next_cursor;
        } while (cursor);
        return acknowledged.filter((id) => !ids.has(id));
      },
      (missing) => missing.length === 0,
      100,
      100,
    );
    expect(recorded, "acknowledged writes without an audit event").to.deep.equal([]);
    const before = await admin.get(`/api/v1/guardrails/${gId}`);
    expectStatus(before, 200);
    // A top-up in flight at the kill may have been applied unacknowledged: the ledger has it too.
    const ledger = await database.db.query<{ n: unknown }>(
      "SELECT sum(amount_micros) AS n FROM config_credit_ledger WHERE workspace_id = $1",
      [wsId],
    );
    const ledgerUsd = Number(ledger[0]?.n ?? 0) / 1_000_000;
    expect(ledgerUsd).to.be.at.least(toppedUp);
    const balance = await admin.get(`/api/v1/workspaces/${wsId}/credits`);
    expect(balance.body.data.balance_usd).to.equal(ledgerUsd);

    const checkEverythingBack = async (api: Api) => {
      const list = await api.get("/api/v1/workspaces");
      expectStatus(list, 200);
      expect(list.body.data.find((w: { is_default: boolean }) => w.is_default)?.id).to.equal(
        defaultId,
      );
      expect(list.body.data.map((w: { id: string }) => w.id)).to.include(wsId);
      const guardrail = await api.get(`/api/v1/guardrails/${gId}`);
      expectStatus(guardrail, 200);
      expect(guardrail.body.data).to.deep.equal(before.body.data);
      const keys = await api.get(`/api/v1/guardrails/${gId}/assignments/keys`);
      expectStatus(keys, 200);
      expect(keys.body.data.map((a: { key_hash: string }) => a.key_hash)).to.deep.equal([hash]);
      const memberList = await api.get(`/api/v1/guardrails/${gId}/assignments/members`);
      expectStatus(memberList, 200);
      expect(memberList.body.data.map((a: { user_id: string }) => a.user_id)).to.deep.equal([
        "user_1",
      ]);
      const credits = await api.get(`/api/v1/workspaces/${wsId}/credits`);
      expectStatus(credits, 200);
      // Nothing was spent: the balance is the ledger's sum.
      expect(credits.body.data.balance_usd).to.equal(ledgerUsd);
      // The key authenticates, with its own identity.
      const self = await new Api(system?.baseUrl() ?? "", secret).get("/api/v1/key");
      expectStatus(self, 200);
    };

    // Emptied under a running system: noticed and refilled without a restart.
    await redis.flush();
    await pollUntil(
      () => admin.get(`/api/v1/guardrails/${gId}`),
      (res) => res.status === 200,
      200,
      100,
    );
    await checkEverythingBack(admin);

    // Emptied while the services were down: refilled before they serve.
    await stop();
    await redis.flush();
    admin = await start();
    await checkEverythingBack(admin);
  });
});
