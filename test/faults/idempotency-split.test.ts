import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { IDEMPOTENCY_KEY_HEADER, idempotencyId } from "../../platform/idempotency.js";
import { hashSecret } from "../../platform/ids.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** The record of a key in Redis (REDIS_PREFIX's default, "rg"). */
const recordKey = (key: string) => `rg:{i:${idempotencyId(hashSecret(MANAGEMENT_KEY), key)}}:idem`;

/**
 * Idempotency-Key across processes: gateway, guardrail and speech each in its own process on one
 * Redis, the gateway killed (SIGKILL) and started again between a request and its retry.
 */
describe("faults: Idempotency-Key when the gateway dies (split topology)", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let system: SplitSystem;
  const admin = () => new Api(system.baseUrl(), MANAGEMENT_KEY);
  const post = (path: string, body: unknown, key: string) =>
    admin().request("POST", path, body, { headers: { [IDEMPOTENCY_KEY_HEADER]: key } });
  const balance = async (workspaceId: string) => {
    const res = await admin().get(`/api/v1/workspaces/${workspaceId}/credits`);
    expectStatus(res, 200);
    return res.body.data;
  };
  const newWorkspace = async () => {
    const res = await admin().post("/api/v1/workspaces", { name: `idem ${randomUUID()}` });
    expectStatus(res, 201);
    return res.body.data.id as string;
  };

  before(async () => {
    redis = await startRedis();
    system = await startSplitSystem(redis.url);
  });
  after(async () => {
    await system?.stop();
    await redis?.stop();
  });

  it("replays an answer a gateway that has since died stored (the answers live in Redis)", async () => {
    const key = randomUUID();
    const name = `idem ${key}`;
    const first = await post("/api/v1/keys", { name }, key);
    expectStatus(first, 201);
    await system.restartGateway();
    const again = await post("/api/v1/keys", { name }, key);
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body).to.deep.equal(first.body);
    const listed = await admin().get("/api/v1/keys?limit=100");
    expect(listed.body.data.filter((k: { name: string }) => k.name === name)).to.have.length(1);
  });

  it("adds a top-up once when the service applied it and the gateway's answer was lost", async () => {
    const ws = await newWorkspace();
    const key = randomUUID();
    // What a gateway passes on before it dies: the top-up reaches AccountService with the key.
    const accounts = createClient(
      AccountService,
      createGrpcTransport({ baseUrl: system.guardrailGrpcUrl }),
    );
    const applied = await accounts.addCredits(
      { workspaceId: ws, amountUsd: 4 },
      { headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, [IDEMPOTENCY_KEY_HEADER]: key } },
    );
    expect(applied.balanceUsd).to.equal(4);
    // The client never got an answer: it retries through the gateway with the same key.
    const retried = await post(`/api/v1/workspaces/${ws}/credits`, { amount_usd: 4 }, key);
    expectStatus(retried, 200);
    expect(retried.body.data.balance_usd).to.equal(4);
    expect(await balance(ws)).to.include({ balance_usd: 4, total_credits: 4 });
  });

  it("holds a key a killed gateway claimed (409), then, once the claim expires, adds once", async () => {
    const ws = await newWorkspace();
    const key = randomUUID();
    const path = `/api/v1/workspaces/${ws}/credits`;
    const probe = redis.client();
    try {
      // A read first: the gateway then knows the key without asking the guardrail process
      // (a write clears that cache).
      expect(await balance(ws)).to.include({ balance_usd: null });
      // The top-up waits at the frozen guardrail process while the gateway holds its claim.
      system.guardrail.process.kill("SIGSTOP");
      const cut = post(path, { amount_usd: 2 }, key).then(
        () => "answered",
        () => "reset",
      );
      const claimed = await pollUntil(
        () => probe.hget(recordKey(key), "t"),
        (token) => token !== null,
      );
      expect(claimed, "the gateway's claim").to.be.a("string");
      // The gateway dies mid-request; a new one starts once the services answer again.
      const gone = system.gateway.process;
      const exited = new Promise((resolve) => gone.once("exit", resolve));
      gone.kill("SIGKILL");
      await exited;
      expect(await cut).to.equal("reset");
      system.guardrail.process.kill("SIGCONT");
      await system.restartGateway();
      // The dead gateway's claim is still there: the retry is told to wait.
      expectError(await post(path, { amount_usd: 2 }, key), 409, /Idempotency-Key/);
      // The claim's 60 s pass (its record expires in Redis): the retry runs, and whether or not
      // the cut request reached the service, the credits move once.
      await probe.del(recordKey(key));
      const retried = await post(path, { amount_usd: 2 }, key);
      expectStatus(retried, 200);
      expect(retried.body.data.balance_usd).to.equal(2);
      // The cut request, if the thawed service runs it now, adds nothing either.
      const settled = await pollUntil(
        () => balance(ws),
        (b) => b.balance_usd === 2,
      );
      expect(settled).to.include({ balance_usd: 2, total_credits: 2 });
    } finally {
      system.guardrail.process.kill("SIGCONT");
      probe.disconnect();
    }
  });
});
