import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { GetGuardrailPolicyShadowResponseSchema } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { ShadowExpiryAnnouncer } from "../../governance/alerts/shadow-expiry.js";
import {
  policyShadowNotice,
  policyShadows,
} from "../../services/guardrail-policies/shadow-expiry.js";
import type { PolicyType, StoredPolicy } from "../../store/policies/types.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { createWorkspace, useSystem } from "../kit/gateway-harness.js";
import { pollUntil } from "../kit/poll.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

const SECRET = "whsec_policy_shadow_expiry_0123456789";
const TYPE = "guardrail_policy.shadow_expired";
const ACCOUNT_TYPE = "account_policy.shadow_expired";
const BUDGET = { include_byok_in_budgets: false, limit_usd: 200, reset_interval: "monthly" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("gateway: a guardrail policy shadow's expiry announced to webhooks", () => {
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

  it("fires guardrail_policy.shadow_expired once, with the report's counts, to each enabled webhook", async () => {
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
    const created = await h.api.post("/api/v1/guardrails/policies/budget", {
      name: "Team budget",
      policy_type: "budget",
      workspace_id: ws.id,
      config: BUDGET,
    });
    expectStatus(created, 201);
    const id = created.body.data.id as string;
    const path = `/api/v1/guardrails/policies/budget/${id}/shadow`;
    const started = await h.api.post(path, {
      change: { name: "Tighter", config: { ...BUDGET, limit_usd: 5 } },
      expires_at: new Date(Date.now() + 1000).toISOString(),
    });
    expectStatus(started, 201);
    const ofPolicy = () => receiver.events(TYPE).filter((e) => e.data.policy_id === id);
    // Running: nothing is sent.
    await sleep(300);
    expect(ofPolicy()).to.deep.equal([]);
    const got = await receiver.waitFor((r) =>
      r.some((x) => x.event?.type === TYPE && x.event.data.policy_id === id),
    );
    const event = got.find((x) => x.event?.type === TYPE && x.event.data.policy_id === id)?.event;
    expect(event, "no guardrail_policy.shadow_expired event").to.not.equal(undefined);
    expect(event.workspace_id).to.equal(ws.id);
    expect(event.data).to.deep.include({
      guardrail_id: null,
      policy_id: id,
      policy_type: "budget",
      key_hash: null,
    });
    expect(event.data.shadow).to.deep.equal({
      update_mask: ["name", "config"],
      started_at: started.body.data.started_at,
      expires_at: started.body.data.expires_at,
      outcomes_changed: 0,
      changes: [],
      affected_generation_ids: [],
      budget: { outcomes_changed: 0, changes: [], affected_generation_ids: [] },
    });
    // No guardrail's event for it: a consumer of guardrail.shadow_expired sees guardrails only.
    expect(receiver.events("guardrail.shadow_expired")).to.deep.equal([]);
    // The report read after the expiry notices it too; several sweeps later it is still once.
    const read = await h.api.get(path);
    expectStatus(read, 200);
    expect(read.body.data.expired).to.equal(true);
    await sleep(500);
    expect(ofPolicy()).to.have.length(1);
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

  it("fires account_policy.shadow_expired once to each covered workspace's webhooks, with the added-up report", async () => {
    const covered = [await createWorkspace(h.api), await createWorkspace(h.api)];
    const outside = await createWorkspace(h.api);
    const hooks: string[] = [];
    for (const ws of [...covered, outside]) {
      const hook = await h.api.post("/api/v1/webhooks", {
        workspace_id: ws.id,
        url: receiver.url,
        secret: SECRET,
      });
      expectStatus(hook, 201);
      hooks.push(hook.body.data.id);
    }
    const created = await h.api.post("/api/v1/guardrails/policies/account", {
      name: "Everyone's cap",
      policy_type: "budget",
      config: BUDGET,
      workspace_ids: covered.map((w) => w.id),
    });
    expectStatus(created, 201);
    const id = created.body.data.id as string;
    const path = `/api/v1/guardrails/policies/account/${id}/shadow`;
    const started = await h.api.post(path, {
      change: { name: "Tighter", config: { ...BUDGET, limit_usd: 5 } },
      expires_at: new Date(Date.now() + 1000).toISOString(),
    });
    expectStatus(started, 201);
    const ofPolicy = () => receiver.events(ACCOUNT_TYPE).filter((e) => e.data.policy_id === id);
    await sleep(300);
    expect(ofPolicy()).to.deep.equal([]);
    await receiver.waitFor(() => ofPolicy().length >= 2);
    const events = ofPolicy();
    expect(events.map((e) => e.workspace_id).sort()).to.deep.equal(covered.map((w) => w.id).sort());
    for (const event of events) {
      expect(event.data).to.deep.include({
        guardrail_id: null,
        policy_id: id,
        policy_type: "budget",
      });
      expect(event.data.shadow).to.deep.equal({
        update_mask: ["name", "config"],
        started_at: started.body.data.started_at,
        expires_at: started.body.data.expires_at,
        outcomes_changed: 0,
        changes: [],
        affected_generation_ids: [],
        budget: { outcomes_changed: 0, changes: [], affected_generation_ids: [] },
      });
    }
    // Not a workspace policy's event, and once per workspace across sweeps and the report read.
    expect(receiver.events(TYPE).filter((e) => e.data.policy_id === id)).to.deep.equal([]);
    const read = await h.api.get(path);
    expectStatus(read, 200);
    expect(read.body.data.expired).to.equal(true);
    await sleep(500);
    expect(ofPolicy()).to.have.length(2);
    // The workspace it does not cover is not told.
    const none = await h.api.get(`/api/v1/webhooks/${hooks[2]}/deliveries`);
    expect(
      none.body.data.filter((d: { event_type: string }) => d.event_type === ACCOUNT_TYPE),
    ).to.deep.equal([]);
  });
});

describe("gateway: a policy shadow's expiry queued once across sweeps that do not share memory", () => {
  let t: TestDatabase;
  before(async function () {
    this.timeout(120_000);
    t = await createTestDatabase("embedded");
  });
  after(() => t?.dispose());

  const nowMs = Date.now();
  const policy = (
    workspaceId: string,
    id: string,
    policyType: PolicyType,
    expiresAtMs: number,
  ): StoredPolicy => ({
    id,
    workspaceId,
    policyType,
    name: "p",
    config: {},
    apiKeyHashes: [],
    memberIds: [],
    isWorkspaceDefault: false,
    optedOutApiKeyHashes: [],
    optedOutMemberIds: [],
    updatedAtMs: nowMs - 120_000,
    shadow: {
      change: { policy_type: policyType, name: "q", config: {}, member_ids: { items: [] } },
      name: "q",
      config: {},
      startedAtMs: nowMs - 60_000,
      expiresAtMs,
    },
  });
  const reportOf = (p: StoredPolicy) =>
    create(GetGuardrailPolicyShadowResponseSchema, {
      expired: (p.shadow?.expiresAtMs ?? 0) <= Date.now(),
      outcomesChanged: 2n,
      changes: [{ live: "allowed", shadow: "refused", count: 2n }],
      budget: { outcomesChanged: 1n, changes: [{ live: "allowed", shadow: "refused", count: 1n }] },
      shadow: {
        startedAt: timestampFromMs(p.shadow?.startedAtMs ?? 0),
        expiresAt: timestampFromMs(p.shadow?.expiresAtMs ?? 0),
      },
    });

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
    // One guardrail's parts taken over as two policies share its id, one per type.
    const shared = newId();
    const running = newId();
    const policies = [
      policy(ws, shared, "budget", nowMs - 1_000),
      policy(ws, shared, "moderation", nowMs - 1_000),
      policy(ws, running, "budget", nowMs + 3_600_000),
    ];
    const reported: string[] = [];
    let kicks = 0;
    const sweep = () =>
      new ShadowExpiryAnnouncer(
        {
          sources: [
            policyShadows({
              listWorkspaces: async (offset) => ({
                items: offset === 0 ? [{ id: ws }] : [],
                total: 1,
              }),
              shadowedPolicies: async (workspaceId) =>
                policies.filter((p) => p.workspaceId === workspaceId),
              report: async (type, id) => {
                reported.push(`${type}:${id}`);
                const p = policies.find((x) => x.policyType === type && x.id === id);
                if (!p) throw new Error(`no ${type} policy ${id}`);
                return { answer: reportOf(p), policy: p };
              },
            }),
          ],
          webhooks,
          kick: () => kicks++,
        },
        60_000,
      );
    await sweep().sweep();
    await sweep().sweep();
    const queued = await webhooks.listDeliveries(hookId, undefined, 10);
    expect(queued.map((d) => d.eventType)).to.deep.equal([TYPE, TYPE]);
    const bodies = queued.map((d) => JSON.parse(d.body ?? "{}"));
    expect(bodies.map((b) => b.data.policy_type).sort()).to.deep.equal(["budget", "moderation"]);
    for (const b of bodies) {
      expect(b.data).to.include({ guardrail_id: null, policy_id: shared });
      expect(b.data.shadow).to.deep.include({
        update_mask: ["name", "config", "member_ids"],
        outcomes_changed: 2,
        changes: [{ live: "allowed", shadow: "refused", count: 2 }],
      });
      expect(b.data.shadow.budget).to.deep.include({ outcomes_changed: 1 });
    }
    // A kick per shadow the first sweep queued, none from the second; the running shadow's report
    // is never read.
    expect(kicks).to.equal(2);
    expect(reported.filter((r) => r.endsWith(running))).to.deep.equal([]);
    // A report read noticing the same expiry queues nothing more.
    const [first] = policies;
    if (!first) throw new Error("no policy");
    await sweep().notice(policyShadowNotice(first, reportOf(first)));
    expect(await webhooks.listDeliveries(hookId, undefined, 10)).to.have.length(2);
  });
});
