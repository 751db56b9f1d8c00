import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { IDEMPOTENCY_KEY_HEADER, idempotencyId } from "../../domain/idempotency.js";
import { hashSecret } from "../../domain/ids.js";
import { requestFingerprint } from "../../gateway/idempotency.js";
import {
  AccountService,
  IdempotencyKeyState,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** The record of a key in Redis (RAILGATE_REDIS_PREFIX's default, "rg"). */
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

  it("holds a key a dead gateway claimed (409), then, once the claim expires, adds once", async () => {
    const ws = await newWorkspace();
    const key = randomUUID();
    const path = `/api/v1/workspaces/${ws}/credits`;
    const body = { amount_usd: 2 };
    // What a gateway that died between its claim and its answer leaves behind: its claim and the
    // top-up it passed on, both made here over gRPC as the gateway makes them.
    const accounts = createClient(
      AccountService,
      createGrpcTransport({ baseUrl: system.guardrailGrpcUrl }),
    );
    const call = {
      headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, [IDEMPOTENCY_KEY_HEADER]: key },
    };
    const fingerprint = requestFingerprint("POST", path, Buffer.from(JSON.stringify(body)));
    const claim = await accounts.claimIdempotencyKey({ fingerprint }, call);
    expect(claim.state).to.equal(IdempotencyKeyState.CLAIMED);
    await accounts.addCredits({ workspaceId: ws, amountUsd: 2 }, call);
    // The client's retry, through a gateway that never saw the first request: told to wait.
    await system.restartGateway();
    expectError(await post(path, body, key), 409, /Idempotency-Key.*in progress/);
    // The claim's 60 s pass (its record expires in Redis): the retry runs, and adds nothing.
    const probe = redis.client();
    try {
      expect(await probe.del(recordKey(key))).to.equal(1);
    } finally {
      probe.disconnect();
    }
    const retried = await post(path, body, key);
    expectStatus(retried, 200);
    expect(retried.body.data.balance_usd).to.equal(2);
    expect(await balance(ws)).to.include({ balance_usd: 2, total_credits: 2 });
    const replayed = await post(path, body, key);
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.body).to.deep.equal(retried.body);
  });
});
