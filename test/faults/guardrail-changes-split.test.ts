import { expect } from "chai";
import { endpoint, model, provider, writeCatalogFile } from "../kit/catalog-entries.js";
import { expectStatus, shown } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api, type JsonResponse, postSpeech } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const MODEL = "quick/tts";
/** At $10 per million characters: 24 characters cost $0.00024, 12 cost $0.00012. */
const LONG = "Twenty-four characters!!";
const SHORT = "Budget test.";

/**
 * A what-if replay and a shadow across the split topology on PostgreSQL: the speech process
 * records the traffic (its governed_by and shadow outcomes) in the request log, and the guardrail
 * process replays and reports it from there, as the gateway answers.
 */
describe("faults: a guardrail's what-if and shadow across the split topology", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let upstream: FakeOpenAi;
  let system: SplitSystem;
  let admin: Api;

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAi().start();
    const catalog = writeCatalogFile(makeTempDir("rg-changes-split-"), {
      providers: { quick: provider(upstream.baseUrl, { timeout_ms: 30_000 }) },
      models: [
        model(MODEL, [endpoint("quick", { price: 10 })], {
          voices: ["alloy"],
          description: "A test voice",
        }),
      ],
    });
    system = await startSplitSystem(redis.url, { RAILGATE_SPEECH_CATALOG_FILE: catalog });
    admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
  });

  after(async () => {
    await system?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  /** A key of a new workspace with credits, governed by a new guardrail of `fields`. */
  async function governedKey(fields: Record<string, unknown>) {
    const ws = await admin.post("/api/v1/workspaces", { name: `changes ${Date.now()}` });
    expectStatus(ws, 201);
    const workspaceId: string = ws.body.data.id;
    expectStatus(
      await admin.post(`/api/v1/workspaces/${workspaceId}/credits`, { amount_usd: 10 }),
      200,
    );
    const created = await admin.post("/api/v1/keys", {
      name: "changes",
      workspace_id: workspaceId,
    });
    expectStatus(created, 201);
    const g = await admin.post("/api/v1/guardrails", { workspace_id: workspaceId, ...fields });
    expectStatus(g, 201);
    const hash: string = created.body.data.hash;
    expectStatus(
      await admin.post(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`, {
        key_hashes: [hash],
      }),
      200,
    );
    return { secret: created.body.key as string, hash, guardrailId: g.body.data.id as string };
  }

  const speak = async (secret: string, input: string) => {
    const res = await postSpeech(system.baseUrl(), secret, { model: MODEL, voice: "alloy", input });
    expect(res.status, shown(res)).to.equal(200);
    return res.headers.get("x-generation-id") as string;
  };

  it("replays a budget exactly from PostgreSQL: an early refusal leaves room for a later request", async () => {
    const key = await governedKey({ name: "No budget yet" });
    const ids = [
      await speak(key.secret, LONG),
      await speak(key.secret, SHORT),
      await speak(key.secret, SHORT),
    ];
    const body = { change: { limit_usd: 0.0002, reset_interval: "daily" } };
    // The log is written off the hot path: replay until it holds the three records.
    const res: JsonResponse = await pollUntil(
      () => admin.post(`/api/v1/guardrails/${key.guardrailId}/simulate`, body),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 3,
    );
    expect(res.status, shown(res)).to.equal(200);
    const data = res.body.data;
    expect(data.requests_replayed).to.equal(3);
    // The long request alone exceeds $0.0002; refused, it leaves room for the second request.
    expect(data.newly_refused).to.deep.equal([{ reason: "budget", count: 2 }]);
    expect(data.affected_generation_ids).to.deep.equal([ids[0], ids[2]]);
    expect(data.spend[0].recorded_usd).to.be.closeTo(0.00048, 1e-12);
    expect(data.spend[0].replayed_usd).to.be.closeTo(0.00012, 1e-12);
  });

  it("a shadow that would redact records its outcome from the speech process; its report reads it", async () => {
    const key = await governedKey({ name: "Live, no filters" });
    const base = `/api/v1/guardrails/${key.guardrailId}/shadow`;
    const started = await admin.post(base, {
      change: { content_filters: [{ pattern: "secret", action: "redact" }] },
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(started.status, shown(started)).to.equal(201);
    // The speech process learns of the shadow through the store's invalidation.
    const secretId = await pollUntil(
      async () => {
        const id = await speak(key.secret, "the secret word");
        const record = await pollUntil(
          () => new Api(system.baseUrl(), key.secret).get(`/api/v1/generation?id=${id}`),
          (r) => r.status === 200,
        );
        return { id, outcome: record.body.data.shadow_outcome };
      },
      (r) => r.outcome !== null,
    );
    expect(secretId.outcome).to.include({
      guardrail_id: key.guardrailId,
      live: "allowed",
      shadow: "redacted",
    });
    const report = await pollUntil(
      () => admin.get(base),
      (r) => r.status !== 200 || r.body.data.outcomes_changed >= 1,
    );
    expect(report.status, shown(report)).to.equal(200);
    expect(report.body.data.changes).to.deep.include({
      live: "allowed",
      shadow: "redacted",
      count: report.body.data.outcomes_changed,
    });
    expect(report.body.data.affected_generation_ids).to.include(secretId.id);
    expectStatus(await admin.request("DELETE", base), 200);
    expect((await admin.get(base)).status).to.equal(404);
  });

  it("a workspace-wide policy's shadow is decided in each workspace it covers by the speech process; its report adds them up", async () => {
    const keys = [
      await governedKey({ name: "Live in a" }),
      await governedKey({ name: "Live in b" }),
    ];
    const workspaceIds: string[] = [];
    for (const key of keys) {
      const res = await admin.get(`/api/v1/keys/${key.hash}`);
      expectStatus(res, 200);
      workspaceIds.push(res.body.data.workspace_id);
    }
    const created = await admin.post("/api/v1/guardrails/policies/account", {
      name: "No filters yet",
      policy_type: "moderation",
      config: {},
      workspace_ids: workspaceIds,
    });
    expectStatus(created, 201);
    const base = `/api/v1/guardrails/policies/account/${created.body.data.id}/shadow`;
    const started = await admin.post(base, {
      change: {
        name: "Secrets redacted",
        config: { content_filters: [{ pattern: "secret", action: "redact" }] },
      },
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(started.status, shown(started)).to.equal(201);
    const ids: string[] = [];
    for (const key of keys) {
      // The speech process learns of the shadow through the account document's invalidation.
      const seen = await pollUntil(
        async () => {
          const id = await speak(key.secret, "the secret word");
          const record = await pollUntil(
            () => new Api(system.baseUrl(), key.secret).get(`/api/v1/generation?id=${id}`),
            (r) => r.status === 200,
          );
          return { id, outcome: record.body.data.shadow_outcome };
        },
        (r) => r.outcome !== null,
      );
      expect(seen.outcome).to.include({
        policy_id: created.body.data.id,
        live: "allowed",
        shadow: "redacted",
      });
      ids.push(seen.id);
    }
    const report = await pollUntil(
      () => admin.get(base),
      (r) => r.status !== 200 || r.body.data.outcomes_changed >= 2,
    );
    expect(report.status, shown(report)).to.equal(200);
    expect(report.body.data.outcomes_changed).to.equal(2);
    expect([...report.body.data.affected_generation_ids].sort()).to.deep.equal(ids.sort());
    expect([...report.body.data.workspace_ids].sort()).to.deep.equal(workspaceIds.sort());
    expectStatus(await admin.request("DELETE", base), 200);
    expect((await admin.get(base)).status).to.equal(404);
  });
});
