import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { GetGuardrailShadowResponseSchema } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { ShadowExpiryAnnouncer } from "../../governance/alerts/shadow-expiry.js";
import { guardrailShadowNotice } from "../../services/guardrail/shadow-expiry.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { createGuardrail, createWorkspace, useSystem } from "../kit/gateway-harness.js";
import { pollUntil } from "../kit/poll.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

const SECRET = "whsec_shadow_expiry_secret_0123456789";
const TYPE = "guardrail.shadow_expired";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("gateway: a guardrail shadow's expiry announced to webhooks", () => {
  // A sweep every 100 ms: an expiry is noticed within a test.
  const h = useSystem(
    {
      env: {
        RAILGATE_WEBHOOK_WORKER_INTERVAL_MS: "50",
        RAILGATE_WEBHOOK_SHADOW_SWEEP_MS: "100",
      },
    },
    { ownDatabase: true },
  );
  const receiver = new WebhookReceiver();
  before(async () => {
    receiver.secret = SECRET;
    await receiver.start();
  });
  after(() => receiver.close());

  it("fires guardrail.shadow_expired once, with the report's counts, to each enabled webhook", async () => {
    const ws = await createWorkspace(h.api);
    const hook = await h.api.post("/api/v1/webhooks", {
      workspace_id: ws.id,
      url: receiver.url,
      secret: SECRET,
    });
    expectStatus(hook, 201);
    const off = await h.api.post("/api/v1/webhooks", {
      workspace_id: ws.id,
      url: receiver.url,
      secret: SECRET,
      enabled: false,
    });
    expectStatus(off, 201);
    const g = (await createGuardrail(h.api, { workspace_id: ws.id, name: "Shadowed" })).id;
    const expiresAt = new Date(Date.now() + 1000).toISOString();
    const started = await h.api.post(`/api/v1/guardrails/${g}/shadow`, {
      change: { limit_usd: 5, reset_interval: "daily" },
      expires_at: expiresAt,
    });
    expectStatus(started, 201);
    // Running: nothing is sent.
    await sleep(300);
    expect(receiver.events(TYPE).filter((e) => e.data.guardrail_id === g)).to.deep.equal([]);
    const got = await receiver.waitFor((r) =>
      r.some((x) => x.event?.type === TYPE && x.event.data.guardrail_id === g),
    );
    const event = got.find((x) => x.event?.type === TYPE && x.event.data.guardrail_id === g)?.event;
    expect(event, "no guardrail.shadow_expired event").to.not.equal(undefined);
    expect(event.workspace_id).to.equal(ws.id);
    expect(event.data.shadow).to.deep.equal({
      update_mask: ["limit_usd", "reset_interval"],
      started_at: started.body.data.started_at,
      expires_at: started.body.data.expires_at,
      outcomes_changed: 0,
      changes: [],
      affected_generation_ids: [],
      budget: { outcomes_changed: 0, changes: [], affected_generation_ids: [] },
    });
    expect(event.data.key_hash).to.equal(null);
    // The report read after the expiry notices it too; several sweeps later it is still once.
    expectStatus(await h.api.get(`/api/v1/guardrails/${g}/shadow`), 200);
    await sleep(500);
    expect(receiver.events(TYPE).filter((e) => e.data.guardrail_id === g)).to.have.length(1);
    const list = await pollUntil(
      () => h.api.get(`/api/v1/webhooks/${hook.body.data.id}/deliveries`),
      (r) =>
        r.status !== 200 || r.body.data.some((d: { status: string }) => d.status === "delivered"),
    );
    const ofType = list.body.data.filter((d: { event_type: string }) => d.event_type === TYPE);
    expect(ofType).to.have.length(1);
    expect(ofType[0].status).to.equal("delivered");
    // A disabled webhook gets none.
    const none = await h.api.get(`/api/v1/webhooks/${off.body.data.id}/deliveries`);
    expect(none.body.data).to.deep.equal([]);
  });
});

describe("gateway: a shadow's expiry queued once across sweeps that do not share memory", () => {
  let t: TestDatabase;
  before(async function () {
    this.timeout(120_000);
    t = await createTestDatabase("embedded");
  });
  after(() => t?.dispose());

  it("a second sweep (another replica, or this one after a restart) queues nothing more", async () => {
    const webhooks = new SqlWebhookStore(t.db);
    const ws = newId();
    const hookId = newId();
    const created = await webhooks.createWebhook(
      {
        id: hookId,
        workspaceId: ws,
        url: "https://example.com/hook",
        secret: SECRET,
        thresholdsPct: [],
        creditsBelowUsd: null,
        enabled: true,
        createdAt: new Date(),
        updatedAt: null,
      },
      20,
    );
    expect(created).to.equal("ok");
    const nowMs = Date.now();
    const report = create(GetGuardrailShadowResponseSchema, {
      expired: true,
      outcomesChanged: 3n,
      changes: [{ live: "allowed", shadow: "refused", count: 3n }],
      shadow: {
        updateMask: ["allowed_models"],
        startedAt: timestampFromMs(nowMs - 60_000),
        expiresAt: timestampFromMs(nowMs - 1_000),
      },
    });
    let kicks = 0;
    const sweep = () =>
      new ShadowExpiryAnnouncer({ sources: [], webhooks, kick: () => kicks++ }, 60_000);
    await sweep().notice(guardrailShadowNotice(ws, "g-1", report));
    await sweep().notice(guardrailShadowNotice(ws, "g-1", report));
    const queued = await webhooks.listDeliveries(hookId, undefined, 10);
    expect(queued.map((d) => d.eventType)).to.deep.equal([TYPE]);
    expect(kicks).to.equal(1);
    const body = JSON.parse(queued[0]?.body ?? "{}");
    expect(body.data.shadow).to.include({ outcomes_changed: 3 });
    expect(body.data.shadow.changes).to.deep.equal([
      { live: "allowed", shadow: "refused", count: 3 },
    ]);
    // A report of a shadow still running queues nothing.
    await sweep().notice(guardrailShadowNotice(ws, "g-2", { ...report, expired: false }));
    expect(await webhooks.listDeliveries(hookId, undefined, 10)).to.have.length(1);
  });
});
