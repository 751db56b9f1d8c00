import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import type { Clock } from "../../platform/time.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import {
  createTestDatabase,
  type DatabaseKind,
  sharedTestDatabase,
  type TestDatabase,
} from "../kit/databases.js";
import {
  type Fakes,
  MODELS,
  makeFakes,
  PRICE,
  PROVIDERS,
  writeCatalog,
} from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway, type Key, type Workspace } from "../kit/enforcement-gateway.js";
import { expectError } from "../kit/expect.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

/** 100 characters at PRICE (10 per million): $0.001 a request. */
const TEXT =
  "Budget alert check, one hundred characters long, spoken through a fake upstream at a known price!!";
const COST_USD = ([...TEXT].length * PRICE) / 1_000_000;
const SECRET = "whsec_budget_alerts_0123456789abcdef";

/** Admission's clock: real time from a day offset the test moves, to open the next budget window. */
class DayClock implements Clock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  nextDay(): void {
    this.offsetMs += 86_400_000;
  }
}

/**
 * Budget alerts end to end: spend is driven through real speech requests (a fake upstream at a
 * known price) on two replicas (two whole systems on one Redis and one database), and a real
 * HTTP receiver checks what arrives. On PostgreSQL and on the embedded PGlite.
 */
for (const kind of ["postgres", "embedded"] as DatabaseKind[]) {
  describe(`budget alerts: thresholds and credits, two replicas (${kind})`, function () {
    this.timeout(120_000);
    let fakes: Fakes;
    let dir: string;
    let redis: ThrowawayRedis;
    let testDb: TestDatabase | undefined;
    let database: SqlDatabase;
    let A: Gateway;
    let B: Gateway;
    const systems: RunningSystem[] = [];
    const clock = new DayClock();
    const receiver = new WebhookReceiver();

    before(async () => {
      fakes = makeFakes();
      await Promise.all(PROVIDERS.map((p) => fakes[p].start()));
      dir = mkdtempSync(join(tmpdir(), "railgate-alerts-"));
      redis = await startRedis();
      if (kind === "postgres") {
        testDb = await createTestDatabase("postgres");
        database = testDb.db;
      } else {
        database = await sharedTestDatabase();
      }
      receiver.secret = SECRET;
      await receiver.start();
      const env = {
        RAILGATE_SPEECH_CATALOG_FILE: writeCatalog(dir, fakes),
        RAILGATE_WEBHOOK_WORKER_INTERVAL_MS: "50",
        RAILGATE_WEBHOOK_BACKOFF_BASE_MS: "50",
        RAILGATE_WEBHOOK_BACKOFF_MAX_MS: "200",
      };
      for (let i = 0; i < 2; i++)
        systems.push(await startTestSystem(redis.url, { env }, { clock, database }));
      A = new Gateway(systems[0] as RunningSystem);
      B = new Gateway(systems[1] as RunningSystem);
    });

    after(async () => {
      for (const s of systems) await s.close();
      await receiver.close();
      await testDb?.dispose();
      await redis?.stop();
      await Promise.all(PROVIDERS.map((p) => fakes[p].close()));
      rmSync(dir, { recursive: true, force: true });
    });

    async function webhook(ws: Workspace, body: Record<string, unknown> = {}): Promise<string> {
      const res = await A.admin.post("/api/v1/webhooks", {
        workspace_id: ws.id,
        url: receiver.url,
        secret: SECRET,
        ...body,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data.id;
    }

    /** Speaks once through each replica in turn, `n` times in all, in pairs at the same time. */
    async function spend(key: Key, n: number): Promise<number[]> {
      const statuses: number[] = [];
      for (let i = 0; i < n; i += 2) {
        const pair = [A, B].slice(0, Math.min(2, n - i));
        const answers = await Promise.all(
          pair.map((gw) => gw.speak(key, { model: MODELS.fast, input: TEXT })),
        );
        statuses.push(...answers.map((r) => r.status));
      }
      return statuses;
    }

    /**
     * Every alert check is done and every delivery of the webhook went out: then what the
     * receiver holds is all there will ever be for the spend so far.
     */
    // biome-ignore lint/suspicious/noExplicitAny: event JSON
    async function settledEvents(ws: Workspace, hookId: string): Promise<any[]> {
      await Promise.all(systems.map((s) => s.alertsIdle()));
      const all = await pollUntil(
        () => A.admin.get(`/api/v1/webhooks/${hookId}/deliveries?limit=100`),
        (r) => r.body.data.every((d: { status: string }) => d.status === "delivered"),
        200,
      );
      expect(all.body.data.every((d: { status: string }) => d.status === "delivered")).to.equal(
        true,
      );
      const ids = new Set(all.body.data.map((d: { event_id: string }) => d.event_id));
      const got = receiver.received.filter((r) => ids.has(r.event?.id));
      // Each delivery reached the receiver exactly once (two workers claim side by side), signed.
      expect(got.length).to.equal(ids.size);
      expect(got.every((r) => r.verified)).to.equal(true);
      expect(got.every((r) => r.event.workspace_id === ws.id)).to.equal(true);
      return got.map((r) => r.event);
    }

    it("a key's guardrail budget: 50, 80 and 100% fire once each per window, whichever replica settles", async () => {
      const { ws, key, guardrailId } = await A.governedKey({
        limit_usd: COST_USD * 10,
        reset_interval: "daily",
      });
      const hook = await webhook(ws);
      // Elsewhere nothing: a disabled webhook of this workspace, an enabled one of another.
      const disabled = await webhook(ws, { url: `${receiver.url}?disabled`, enabled: false });
      const other = await webhook(await A.workspace(), { url: `${receiver.url}?other` });

      const statuses = await spend(key, 12);
      // Admission refuses once the budget is spent: 10 served, 2 refused.
      expect(statuses.filter((s) => s === 200)).to.have.length(10);
      expect(statuses.filter((s) => s === 403)).to.have.length(2);

      const delivered = await settledEvents(ws, hook);
      // The refusals say the budget is used up, once for the window.
      const exhausted = delivered.filter((e) => e.type === "budget.exhausted");
      expect(exhausted).to.have.length(1);
      expect(exhausted[0].data).to.deep.include({ guardrail_id: guardrailId, key_hash: key.hash });
      const events = delivered.filter((e) => e.type === "budget.threshold");
      expect(events.map((e) => e.data.threshold_pct).sort((a, b) => a - b)).to.deep.equal([
        50, 80, 100,
      ]);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      for (const e of events) {
        expect(e).to.include({ type: "budget.threshold", workspace_id: ws.id });
        expect(e.id).to.match(/^evt_/);
        expect(e.data).to.deep.include({
          guardrail_id: guardrailId,
          policy_id: null,
          key_hash: key.hash,
          member: null,
          scope: "api_key",
          limit_usd: COST_USD * 10,
        });
        expect(e.data.spend_usd).to.be.at.least(
          (COST_USD * 10 * e.data.threshold_pct) / 100 - 1e-9,
        );
        expect(e.data.window).to.deep.equal({
          interval: "daily",
          start: `${day}T00:00:00.000Z`,
          end: new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString(),
        });
      }
      for (const id of [disabled, other]) {
        const res = await A.admin.get(`/api/v1/webhooks/${id}/deliveries`);
        expect(res.body.data).to.deep.equal([]);
      }
      expect(receiver.received.filter((r) => /\?(disabled|other)$/.test(r.path))).to.deep.equal([]);
      const metrics = await (
        await fetch(`${A.url()}/metrics`, {
          headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
        })
      ).text();
      expect(metrics).to.match(
        /^railgate_budget_alerts_queued_total\{type="budget.threshold"\} [1-9]/m,
      );

      // The next day is another window: the budget is free again and each threshold fires again.
      clock.nextDay();
      const again = await spend(key, 10);
      expect(again.every((s) => s === 200)).to.equal(true);
      const both = (await settledEvents(ws, hook)).filter((e) => e.type === "budget.threshold");
      expect(both).to.have.length(6);
      const nextDay = both.filter((e) => e.data.window.start !== `${day}T00:00:00.000Z`);
      expect(nextDay.map((e) => e.data.threshold_pct).sort((a, b) => a - b)).to.deep.equal([
        50, 80, 100,
      ]);
    });

    it("a member's guardrail: the member's total across keys alerts once per threshold, as the member", async () => {
      const ws = await A.workspace();
      const member = `member-${ws.id.slice(0, 8)}`;
      const [k1, k2] = [
        await A.key(ws, { member_user_id: member }),
        await A.key(ws, { member_user_id: member }),
      ];
      const g = await A.guardrail(ws, { limit_usd: COST_USD * 4, reset_interval: "monthly" });
      await A.assignMembers(g, member);
      const hook = await webhook(ws, { thresholds_pct: [50, 100] });
      await spend(k1 as Key, 2);
      await spend(k2 as Key, 2);
      expectError(await B.speak(k1 as Key, { model: MODELS.fast, input: TEXT }), 403, /member/);
      const delivered = await settledEvents(ws, hook);
      // The member's refusal says the member's budget is used up.
      expect(delivered.filter((e) => e.type === "budget.exhausted")).to.have.length(1);
      const events = delivered.filter((e) => e.type !== "budget.exhausted");
      expect(events.map((e) => e.data.threshold_pct).sort((a, b) => a - b)).to.deep.equal([
        50, 100,
      ]);
      for (const e of delivered) {
        expect(e.data).to.deep.include({
          guardrail_id: g,
          key_hash: null,
          member,
          scope: "member",
        });
        expect(e.data.window.interval).to.equal("monthly");
      }
    });

    it("a member's budget policy alerts like a guardrail's, naming the policy", async () => {
      const ws = await A.workspace();
      const member = `member-${ws.id.slice(0, 8)}`;
      const [k1, k2] = [
        await A.key(ws, { member_user_id: member }),
        await A.key(ws, { member_user_id: member }),
      ];
      const created = await A.admin.post("/api/v1/guardrails/policies/budget", {
        name: "Member budget",
        policy_type: "budget",
        workspace_id: ws.id,
        config: {
          limit_usd: COST_USD * 4,
          reset_interval: "monthly",
          include_byok_in_budgets: false,
        },
        member_ids: [member],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const policyId = created.body.data.id as string;
      const hook = await webhook(ws, { thresholds_pct: [50, 100] });
      await spend(k1 as Key, 2);
      await spend(k2 as Key, 2);
      expectError(await B.speak(k1 as Key, { model: MODELS.fast, input: TEXT }), 403, /member/);
      const delivered = await settledEvents(ws, hook);
      // The refusal exhausts the budget: one budget.exhausted beside the thresholds, naming the policy too.
      const exhausted = delivered.filter((e) => e.type === "budget.exhausted");
      expect(exhausted).to.have.length(1);
      const events = delivered.filter((e) => e.type !== "budget.exhausted");
      expect(events.map((e) => e.data.threshold_pct).sort((a, b) => a - b)).to.deep.equal([
        50, 100,
      ]);
      for (const e of [...events, ...exhausted]) {
        expect(e.data).to.deep.include({
          guardrail_id: policyId,
          policy_id: policyId,
          policy_type: "budget",
          key_hash: null,
          member,
          scope: "member",
        });
      }
    });

    it("the workspace default counts per member and per key: each alerts on its own", async () => {
      const ws = await A.workspace();
      const member = `owner-${ws.id.slice(0, 8)}`;
      const key = await A.key(ws, { member_user_id: member });
      await A.setDefault(ws, { limit_usd: COST_USD * 4, reset_interval: "weekly" });
      const hook = await webhook(ws, { thresholds_pct: [100] });
      expect(await spend(key, 5)).to.deep.equal([200, 200, 200, 200, 403]);
      const events = await settledEvents(ws, hook);
      const by = Object.fromEntries(events.map((e) => [e.data.scope, e.data]));
      expect(Object.keys(by).sort()).to.deep.equal([
        "workspace_default_key",
        "workspace_default_member",
      ]);
      expect(by.workspace_default_key).to.deep.include({
        guardrail_id: ws.defaultGuardrailId,
        key_hash: key.hash,
        member: null,
        threshold_pct: 100,
      });
      expect(by.workspace_default_member).to.deep.include({
        guardrail_id: ws.defaultGuardrailId,
        key_hash: null,
        member,
      });
      expect(by.workspace_default_key.window.interval).to.equal("weekly");
    });

    it("a key's own limit (all-time): each threshold fires once for the key's life", async () => {
      const ws = await A.workspace();
      const key = await A.key(ws, { limit: COST_USD * 4 });
      const hook = await webhook(ws, { thresholds_pct: [75] });
      expect(await spend(key, 5)).to.deep.equal([200, 200, 200, 200, 403]);
      const events = await settledEvents(ws, hook);
      expect(events).to.have.length(1);
      expect(events[0].data).to.deep.include({
        guardrail_id: null,
        key_hash: key.hash,
        member: null,
        scope: "key_limit",
        threshold_pct: 75,
        window: { interval: "all_time", start: null, end: null },
      });
    });

    it("a key limit with limit_reset: its window is the reset's, so thresholds fire again in the next", async () => {
      const ws = await A.workspace();
      const key = await A.key(ws, { limit: COST_USD * 4, limit_reset: "daily" });
      const hook = await webhook(ws, { thresholds_pct: [50] });
      expect(await spend(key, 3)).to.deep.equal([200, 200, 200]);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      const first = await settledEvents(ws, hook);
      expect(first).to.have.length(1);
      expect(first[0].data).to.deep.include({ scope: "key_limit", key_hash: key.hash });
      expect(first[0].data.window).to.deep.equal({
        interval: "daily",
        start: `${day}T00:00:00.000Z`,
        end: new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString(),
      });
      clock.nextDay();
      expect(await spend(key, 2)).to.deep.equal([200, 200]);
      const both = await settledEvents(ws, hook);
      expect(both).to.have.length(2);
      expect(new Set(both.map((e) => e.data.window.start)).size).to.equal(2);
    });

    it("credits.low: once when the balance falls below, again only after a top-up", async () => {
      const ws = await A.workspace();
      await A.addCredits(ws, COST_USD * 5);
      const key = await A.key(ws);
      const hook = await webhook(ws, { thresholds_pct: [], credits_below_usd: COST_USD * 2.5 });
      // 5 -> 2 requests' worth left: below 2.5 after the third, still below after the fourth.
      await spend(key, 4);
      const first = await settledEvents(ws, hook);
      expect(first).to.have.length(1);
      expect(first[0]).to.deep.include({ type: "credits.low", workspace_id: ws.id });
      expect(first[0].data).to.deep.include({
        credits_below_usd: COST_USD * 2.5,
        threshold_pct: null,
        window: null,
      });
      expect(first[0].data.balance_usd).to.be.below(COST_USD * 2.5);
      // A top-up starts another episode: falling below again alerts again.
      await A.addCredits(ws, COST_USD * 2);
      await spend(key, 2);
      const second = await settledEvents(ws, hook);
      expect(second.filter((e) => e.type === "credits.low")).to.have.length(2);
      expectAudio(await A.speak(key, { model: MODELS.fast, input: TEXT }));
      expect(await settledEvents(ws, hook)).to.have.length(2);
    });
  });
}
