import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { IDEMPOTENCY_TTL_SECONDS, idempotencyId } from "../../domain/idempotency.js";
import { hashSecret } from "../../domain/ids.js";
import { requestFingerprint } from "../../gateway/idempotency.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";
import type { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const MANAGEMENT_HASH = hashSecret(MANAGEMENT_KEY);

function post(api: Api, path: string, body: unknown, key: string) {
  return api.request("POST", path, body, { headers: { "idempotency-key": key } });
}

describe("gateway: Idempotency-Key on management writes", () => {
  const h = useSystem();

  async function keysNamed(name: string): Promise<number> {
    const res = await h.api.get("/api/v1/keys?limit=100");
    expectStatus(res, 200);
    return res.body.data.filter((k: { name: string }) => k.name === name).length;
  }

  async function credits(workspaceId: string) {
    const res = await h.api.get(`/api/v1/workspaces/${workspaceId}/credits`);
    expectStatus(res, 200);
    return res.body.data;
  }

  it("replays a key create: the same answer (the same secret), one key made", async () => {
    const key = randomUUID();
    const name = `idem-${key}`;
    const first = await post(h.api, "/api/v1/keys", { name }, key);
    expectStatus(first, 201);
    expect(first.headers.get("idempotent-replayed")).to.equal(null);
    const again = await post(h.api, "/api/v1/keys", { name }, key);
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body).to.deep.equal(first.body);
    expect(await keysNamed(name)).to.equal(1);
    // Without a key, the same request is a new one.
    expectStatus(await h.api.post("/api/v1/keys", { name }), 201);
    expect(await keysNamed(name)).to.equal(2);
  });

  it("replays a credit top-up: added once, the same balance answered", async () => {
    const ws = await createWorkspace(h.api);
    const key = randomUUID();
    const path = `/api/v1/workspaces/${ws.id}/credits`;
    const first = await post(h.api, path, { amount_usd: 5 }, key);
    expectStatus(first, 200);
    expect(first.body.data.balance_usd).to.equal(5);
    const again = await post(h.api, path, { amount_usd: 5 }, key);
    expectStatus(again, 200);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body).to.deep.equal(first.body);
    expect(await credits(ws.id)).to.include({ balance_usd: 5, total_credits: 5 });
  });

  it("refuses the same key on another body or path with 422 naming the header", async () => {
    const ws = await createWorkspace(h.api);
    const key = randomUUID();
    const path = `/api/v1/workspaces/${ws.id}/credits`;
    expectStatus(await post(h.api, path, { amount_usd: 1 }, key), 200);
    expectError(await post(h.api, path, { amount_usd: 2 }, key), 422, /Idempotency-Key/);
    expectError(
      await post(h.api, "/api/v1/keys", { name: "other" }, key),
      422,
      /Idempotency-Key.*another request/,
    );
    expect(await credits(ws.id)).to.include({ balance_usd: 1 });
  });

  it("keeps each caller's keys apart", async () => {
    const other = await createKey(h.api, { kind: "management" });
    const key = randomUUID();
    const name = `idem-${key}`;
    expectStatus(await post(h.api, "/api/v1/keys", { name }, key), 201);
    const theirs = await post(h.api.withKey(other.secret), "/api/v1/keys", { name }, key);
    expectStatus(theirs, 201);
    expect(theirs.headers.get("idempotent-replayed")).to.equal(null);
    expect(await keysNamed(name)).to.equal(2);
  });

  it("answers 400 naming the header and the rule for a key that breaks it", async () => {
    for (const bad of ["x".repeat(256), "caf\u00e9"]) {
      const res = await post(h.api, "/api/v1/keys", { name: "bad key" }, bad);
      expectError(res, 400, /Idempotency-Key must be 1 to 255 printable ASCII characters/);
    }
    expect(await keysNamed("bad key")).to.equal(0);
    // 255 printable characters (spaces and punctuation included) are a key.
    const longest = `${"~ ".repeat(127)}!`;
    expectStatus(await post(h.api, "/api/v1/keys", { name: "longest key" }, longest), 201);
  });

  it("stores a client error as the answer and replays it", async () => {
    const key = randomUUID();
    const first = await post(h.api, "/api/v1/keys", { name: "" }, key);
    expectError(first, 400);
    const again = await post(h.api, "/api/v1/keys", { name: "" }, key);
    expect(again.status).to.equal(400);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body).to.deep.equal(first.body);
  });

  it("answers 409 while the first request with the key is still in progress", async () => {
    const key = randomUUID();
    const body = { name: `idem-${key}` };
    const id = idempotencyId(MANAGEMENT_HASH, key);
    // The first request's claim, as a gateway that is still running it holds it.
    const fingerprint = requestFingerprint(
      "POST",
      "/api/v1/keys",
      Buffer.from(JSON.stringify(body)),
    );
    const claim = await h.system.store.claimIdempotency(id, fingerprint, 60);
    expect(claim.state).to.equal("claimed");
    const res = await post(h.api, "/api/v1/keys", body, key);
    expectError(res, 409, /Idempotency-Key.*in progress/);
    expect(res.headers.get("retry-after")).to.match(/^\d+$/);
    expect(await keysNamed(body.name)).to.equal(0);
    // Once the first answers, the retry gets its answer.
    if (claim.state !== "claimed") return;
    const answer = { status: 201, body: '{"data":{"first":true}}' };
    await h.system.store.completeIdempotency(id, claim.token, answer, 60);
    const replayed = await post(h.api, "/api/v1/keys", body, key);
    expect(replayed.status).to.equal(201);
    expect(replayed.body).to.deep.equal({ data: { first: true } });
  });

  it("adds a top-up once when the process that applied it died before answering", async () => {
    const ws = await createWorkspace(h.api);
    const key = randomUUID();
    const path = `/api/v1/workspaces/${ws.id}/credits`;
    const body = { amount_usd: 3 };
    const id = idempotencyId(MANAGEMENT_HASH, key);
    // What a gateway killed mid-request leaves: its claim (here one that expires in a second),
    // and the top-up the service applied under the key, with no answer stored.
    const fingerprint = requestFingerprint("POST", path, Buffer.from(JSON.stringify(body)));
    expect((await h.system.store.claimIdempotency(id, fingerprint, 1)).state).to.equal("claimed");
    await h.system.store.addCreditsOnce(ws.id, 3_000_000, id, IDEMPOTENCY_TTL_SECONDS);
    expect(await credits(ws.id)).to.include({ balance_usd: 3 });
    // The client's retry: held off while the claim lives, then it runs, and adds nothing.
    const retried = await pollUntil(
      () => post(h.api, path, body, key),
      (res) => res.status !== 409,
    );
    expectStatus(retried, 200);
    expect(retried.body.data.balance_usd).to.equal(3);
    expect(await credits(ws.id)).to.include({ balance_usd: 3, total_credits: 3 });
    // From then on its answer is replayed.
    const replayed = await post(h.api, path, body, key);
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.body).to.deep.equal(retried.body);
  });

  it("documents the header on every management write, and only there", async () => {
    const doc = (await h.anon.get("/api/v1/openapi.json")).body;
    const named = (op: { parameters?: { name: string; in: string }[] }) =>
      (op.parameters ?? []).some((p) => p.name === "Idempotency-Key" && p.in === "header");
    expect(named(doc.paths["/api/v1/keys"].post)).to.equal(true);
    expect(named(doc.paths["/api/v1/keys/{hash}"].patch)).to.equal(true);
    expect(named(doc.paths["/api/v1/keys/{hash}"].delete)).to.equal(true);
    expect(named(doc.paths["/api/v1/workspaces/{id}/credits"].post)).to.equal(true);
    expect(named(doc.paths["/api/v1/keys"].get)).to.equal(false);
    expect(named(doc.paths["/api/v1/audio/speech"].post)).to.equal(false);
  });
});
