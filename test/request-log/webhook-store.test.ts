import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";
import type { NewDelivery, WebhookRecord } from "../../store/webhooks/types.js";
import { onBothDatabases } from "../kit/databases.js";

const T0 = new Date("2026-11-26T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

function webhook(workspaceId: string, over: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id: newId(),
    workspaceId,
    url: "https://example.com/hook",
    secret: "whsec_store_test_0123456789",
    thresholdsPct: [50, 80, 100],
    creditsBelowUsd: null,
    enabled: true,
    createdAt: T0,
    updatedAt: null,
    ...over,
  };
}

function delivery(
  w: WebhookRecord,
  onceKey: string | null,
  keepUntil: Date | null = null,
): NewDelivery {
  return {
    webhookId: w.id,
    workspaceId: w.workspaceId,
    eventId: `evt_${newId()}`,
    eventType: onceKey ? "budget.threshold" : "webhook.test",
    body: JSON.stringify({ once: onceKey }),
    onceKey,
    keepUntil,
  };
}

onBothDatabases("webhook store (SQL)", (getDb) => {
  let store: SqlWebhookStore;
  before(() => {
    store = new SqlWebhookStore(getDb());
  });

  it("creates, reads, lists (by workspace, paged) and counts webhooks", async () => {
    const ws = newId();
    const a = webhook(ws, { creditsBelowUsd: 12.5, thresholdsPct: [10, 90] });
    const b = webhook(ws, { createdAt: at(1) });
    expect(await store.createWebhook(a, 20)).to.equal("ok");
    expect(await store.createWebhook(b, 20)).to.equal("ok");
    expect(await store.createWebhook(webhook(newId()), 20)).to.equal("ok");
    expect(await store.getWebhook(a.id)).to.deep.equal(a);
    const page = await store.listWebhooks(ws, 1, 10);
    expect(page.total).to.equal(2);
    expect(page.items.map((w) => w.id)).to.deep.equal([b.id]);
    expect((await store.listWebhooks(undefined, 0, 100)).total).to.be.at.least(3);
    expect(await store.getWebhook(newId())).to.equal(undefined);
  });

  it("writes a change and its audit event in one transaction: an event refused takes the change back", async () => {
    const ws = newId();
    const w = webhook(ws);
    const event = (id: string) => () => ({
      id,
      at: new Date(),
      actor: { keyHash: "a".repeat(64), label: "rg-mgmt-...abcd", name: "ops" },
      action: "webhook.create",
      resource: { type: "webhook", id: w.id, label: w.url },
      workspaceId: ws,
      changes: {},
      requestId: null,
    });
    const id = newId();
    expect(await store.createWebhook(w, 20, event(id))).to.equal("ok");
    const rows = await getDb().query("SELECT id FROM audit_events WHERE id = $1", [id]);
    expect(rows).to.have.length(1);
    // An event whose insert fails (a changes value that is not JSON) rolls the delete back.
    const broken = () => ({ ...event(newId())(), changes: undefined as never });
    let failed = false;
    await store.deleteWebhook(w.id, broken).catch(() => {
      failed = true;
    });
    expect(failed).to.equal(true);
    expect(await store.getWebhook(w.id)).to.deep.equal(w);
  });

  it("refuses a create past the workspace's count, even when creates race", async () => {
    const ws = newId();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => store.createWebhook(webhook(ws), 4)),
    );
    expect(results.filter((r) => r === "ok")).to.have.length(4);
    expect(results.filter((r) => r === "limit")).to.have.length(2);
    expect((await store.listWebhooks(ws, 0, 100)).total).to.equal(4);
  });

  it("updates only the fields given, and answers undefined for a missing webhook", async () => {
    const w = webhook(newId(), { creditsBelowUsd: 3 });
    await store.createWebhook(w, 20);
    const updated = await store.updateWebhook(
      w.id,
      { enabled: false, creditsBelowUsd: null },
      at(5),
    );
    expect(updated).to.deep.equal({
      ...w,
      enabled: false,
      creditsBelowUsd: null,
      updatedAt: at(5),
    });
    expect(await store.updateWebhook(newId(), { enabled: true }, at(6))).to.equal(undefined);
    expect(await store.enabledWebhooks(w.workspaceId)).to.deep.equal([]);
  });

  it("queues a delivery with a once key once, however many replicas insert it at the same time", async () => {
    const w = webhook(newId());
    await store.createWebhook(w, 20);
    const tries = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.enqueue([delivery(w, "budget:g:key:k:daily:x:80")], T0),
      ),
    );
    expect(tries.flat()).to.have.length(1);
    // Another percentage, or no once key at all, is another delivery.
    expect(await store.enqueue([delivery(w, "budget:g:key:k:daily:x:100")], T0)).to.have.length(1);
    expect(await store.enqueue([delivery(w, null), delivery(w, null)], T0)).to.have.length(2);
    expect(await store.listDeliveries(w.id, undefined, 100)).to.have.length(4);
  });

  it("queues no alert for a disabled webhook (a test event still goes)", async () => {
    const w = webhook(newId(), { enabled: false });
    await store.createWebhook(w, 20);
    expect(await store.enqueue([delivery(w, "budget:x:80")], T0)).to.deep.equal([]);
    expect(await store.enqueue([delivery(w, null)], T0)).to.have.length(1);
  });

  it("queues nothing for a webhook that no longer exists", async () => {
    const w = webhook(newId());
    expect(await store.enqueue([delivery(w, "k"), delivery(w, null)], T0)).to.deep.equal([]);
  });

  it("lists deliveries newest first by cursor, without repeats or gaps", async () => {
    const w = webhook(newId());
    await store.createWebhook(w, 20);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(...(await store.enqueue([delivery(w, null)], at(i * 1000))));
    // Two at the same instant: the id breaks the tie.
    ids.push(...(await store.enqueue([delivery(w, null), delivery(w, null)], at(9000))));
    const seen: string[] = [];
    let before: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const page = await store.listDeliveries(w.id, before, 3);
      seen.push(...page.map((d) => d.id));
      const last = page.at(-1);
      if (page.length < 3 || !last) break;
      before = { createdAt: last.createdAt, id: last.id };
    }
    expect(seen).to.have.length(7);
    expect(new Set(seen).size).to.equal(7);
    expect(seen.slice(2)).to.deep.equal(ids.slice(0, 5).reverse());
  });

  it("claims each due delivery for one worker only (SKIP LOCKED), counting the attempt", async () => {
    const w = webhook(newId());
    await store.createWebhook(w, 20);
    const queued = await store.enqueue(
      Array.from({ length: 10 }, () => delivery(w, null)),
      at(-1000),
    );
    expect(await store.claimDue(at(-2000), 10, at(60_000))).to.deep.equal([]);
    const claims = await Promise.all(
      Array.from({ length: 4 }, () => store.claimDue(T0, 4, at(60_000))),
    );
    const claimed = claims.flat().filter((d) => queued.includes(d.id));
    expect(claimed).to.have.length(10);
    expect(new Set(claimed.map((d) => d.id)).size).to.equal(10);
    for (const d of claimed) {
      expect(d.attempts).to.equal(1);
      expect(d).to.include({ url: w.url, secret: w.secret });
      expect(JSON.parse(d.body)).to.deep.equal({ once: null });
    }
    // Leased: nobody claims them again before the lease ends, then they are due again.
    const again = await store.claimDue(at(59_000), 100, at(120_000));
    expect(again.filter((d) => queued.includes(d.id))).to.deep.equal([]);
    const afterLease = await store.claimDue(at(60_000), 100, at(120_000));
    expect(afterLease.filter((d) => queued.includes(d.id))).to.have.length(10);
  });

  it("records delivered, retried and failed attempts", async () => {
    const w = webhook(newId());
    await store.createWebhook(w, 20);
    const [ok, retry, failed] = await store.enqueue(
      [delivery(w, null), delivery(w, null), delivery(w, null)],
      T0,
    );
    await store.recordAttempt(String(ok), {
      delivered: true,
      statusCode: 200,
      error: null,
      nextAttemptAt: null,
      at: at(10),
    });
    await store.recordAttempt(String(retry), {
      delivered: false,
      statusCode: 503,
      error: "http_status",
      nextAttemptAt: at(5000),
      at: at(10),
    });
    await store.recordAttempt(String(failed), {
      delivered: false,
      statusCode: null,
      error: "connection_refused",
      nextAttemptAt: null,
      at: at(10),
    });
    expect(await store.getDelivery(String(ok))).to.deep.include({
      status: "delivered",
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: at(10),
    });
    expect(await store.getDelivery(String(retry))).to.deep.include({
      status: "pending",
      lastStatusCode: 503,
      lastError: "http_status",
      nextAttemptAt: at(5000),
      deliveredAt: null,
    });
    expect(await store.getDelivery(String(failed))).to.deep.include({
      status: "failed",
      lastStatusCode: null,
      lastError: "connection_refused",
      nextAttemptAt: null,
    });
  });

  it("prunes finished deliveries and once keys whose window ended; deleting a webhook takes its rows", async () => {
    const w = webhook(newId());
    await store.createWebhook(w, 20);
    const [done] = await store.enqueue([delivery(w, "old-window", at(1000))], T0);
    await store.recordAttempt(String(done), {
      delivered: true,
      statusCode: 200,
      error: null,
      nextAttemptAt: null,
      at: T0,
    });
    const [pending] = await store.enqueue([delivery(w, "kept", null)], T0);
    await store.prune(at(2000), at(1));
    expect(await store.getDelivery(String(done))).to.equal(undefined);
    expect(await store.getDelivery(String(pending))).to.not.equal(undefined);
    // The window ended: its once key is forgotten, so the key may fire again (a new window would).
    expect(await store.enqueue([delivery(w, "old-window", at(1000))], T0)).to.have.length(1);
    expect(await store.enqueue([delivery(w, "kept", null)], T0)).to.deep.equal([]);
    expect(await store.deleteWebhook(w.id)).to.equal(true);
    expect(await store.deleteWebhook(w.id)).to.equal(false);
    expect(await store.getDelivery(String(pending))).to.equal(undefined);
  });
});
