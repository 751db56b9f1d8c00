import { expect } from "chai";
import { endpoint, model, provider, writeCatalogFile } from "../kit/catalog-entries.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api, postSpeech } from "../kit/http.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const ALLOWED = "quick/tts";
const OTHER = "other/tts";
const NONE = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };

/**
 * Split topology: a policy written through the gateway lands in the guardrail process and must
 * govern the very next request the speech process serves (its cached principal is dropped by
 * the store's invalidation over Redis), and the 409 of a stale expected_assignment holds across
 * processes.
 */
describe("faults: guardrail policies across the split topology", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let upstream: FakeOpenAi;
  let system: SplitSystem;
  let admin: Api;
  let key: { secret: string; hash: string; workspaceId: string };
  const speak = (m: string) =>
    postSpeech(system.baseUrl(), key.secret, { model: m, voice: "alloy", input: "Policy." });

  before(async () => {
    redis = await startRedis();
    upstream = await new FakeOpenAi().start();
    const catalog = writeCatalogFile(makeTempDir("rg-policies-split-"), {
      providers: {
        quick: provider(upstream.baseUrl, { timeout_ms: 30_000 }),
        other: provider(upstream.baseUrl, { timeout_ms: 30_000 }),
      },
      models: [
        model(ALLOWED, [endpoint("quick", { price: 10 })], {
          voices: ["alloy"],
          description: "A test voice",
        }),
        model(OTHER, [endpoint("other", { price: 10 })], {
          voices: ["alloy"],
          description: "A test voice",
        }),
      ],
    });
    system = await startSplitSystem(redis.url, { RAILGATE_SPEECH_CATALOG_FILE: catalog });
    admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const created = await admin.post("/api/v1/keys", { name: "split policies" });
    expectStatus(created, 201);
    key = {
      secret: created.body.key,
      hash: created.body.data.hash,
      workspaceId: created.body.data.workspace_id,
    };
    expectStatus(
      await admin.post(`/api/v1/workspaces/${key.workspaceId}/credits`, { amount_usd: 10 }),
      200,
    );
  });

  after(async () => {
    await system?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  it("an assignment made through the gateway governs the speech process's next request", async () => {
    // The speech process has the key's principal cached from this request.
    expectStatus(await speak(OTHER), 200);
    const created = await admin.post("/api/v1/guardrails/policies/model_availability", {
      name: "Only quick",
      policy_type: "model_availability",
      workspace_id: key.workspaceId,
      config: { allowed_models: [ALLOWED] },
    });
    expectStatus(created, 201);
    const change = (expected: unknown) =>
      admin.request("PUT", `/api/v1/guardrails/policies/assignments/api-keys/${key.hash}`, {
        assigned: true,
        expected_assignment: expected,
        policy_id: created.body.data.id,
        policy_type: "model_availability",
        workspace_id: key.workspaceId,
      });
    const assigned = await change(NONE);
    expectStatus(assigned, 200);
    expect(assigned.body).to.deep.equal({ data: true });
    expectError(await speak(OTHER), 403, /not allowed|allowed_models/);
    expectStatus(await speak(ALLOWED), 200);
    // A second operator still holding the old state is refused.
    expectError(await change(NONE), 409, /expected_assignment/);
  });

  it("a policy's checks, forced change, versions and restore hold across processes", async () => {
    const base = "/api/v1/guardrails/policies/model_availability";
    const created = await admin.post(base, {
      name: "Checked",
      policy_type: "model_availability",
      workspace_id: key.workspaceId,
      config: { allowed_models: [ALLOWED] },
      checks: [{ name: "quick is allowed", request: { model: ALLOWED }, expect: "allowed" }],
    });
    expectStatus(created, 201);
    expect(created.body.data.last_check_run.passed).to.equal(true);
    const path = `${base}/${created.body.data.id}`;
    const change = { name: "Checked", config: { allowed_models: [OTHER] } };
    const refused = await admin.request("PUT", path, change);
    expect(refused.status).to.equal(409);
    expect(refused.body.error.metadata.failing_checks).to.have.length(1);
    expect(refused.body.error.metadata.failing_checks[0]).to.match(
      /^quick is allowed: expected allowed, got refused \(.*allowed_models/,
    );
    expectStatus(await admin.request("PUT", path, { ...change, force: true }), 200);
    // The guardrail process wrote each version with its audit event before answering.
    const versions = await admin.get(`${path}/versions`);
    expectStatus(versions, 200);
    expect(versions.body.data.map((v: { forced: boolean }) => v.forced)).to.deep.equal([
      true,
      false,
    ]);
    const restored = await admin.post(`${path}/versions/1/restore`);
    expectStatus(restored, 200);
    expect(restored.body.data.config).to.deep.equal({ allowed_models: [ALLOWED] });
    expect(restored.body.data.last_check_run.passed).to.equal(true);
    const after = await admin.get(`${path}/versions?limit=1`);
    expect(after.body.data[0]).to.include({ action: "guardrail_policy.restore", restored_from: 1 });
  });
});
