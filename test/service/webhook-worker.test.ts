import { expect } from "chai";
import { newId } from "../../domain/ids.js";
import { DeliveryWorker } from "../../services/webhooks/worker.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";
import type { DeliveryRecord, WebhookRecord } from "../../store/webhooks/types.js";
import { onBothDatabases } from "../kit/databases.js";
import { freePort } from "../kit/free-port.js";
import { pollUntil } from "../kit/poll.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

const SECRET = "whsec_worker_test_0123456789abcdef";

/** The delivery worker on each database, against a real receiver. */
onBothDatabases("webhook delivery worker", (getDb) => {
  const receiver = new WebhookReceiver();
  const workers: DeliveryWorker[] = [];
  let store: SqlWebhookStore;

  before(async () => {
    store = new SqlWebhookStore(getDb());
    receiver.secret = SECRET;
    await receiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
  });
  after(() => receiver.close());

  function worker(over: { concurrency?: number; maxAgeMs?: number } = {}): DeliveryWorker {
    const w = new DeliveryWorker(store, {
      timeoutMs: 2_000,
      intervalMs: 20,
      concurrency: over.concurrency ?? 4,
      backoff: { baseMs: 20, maxMs: 80, maxAgeMs: over.maxAgeMs ?? 60_000 },
    });
    workers.push(w);
    return w;
  }

  async function hookWith(n: number): Promise<{ hook: WebhookRecord; ids: string[] }> {
    const hook: WebhookRecord = {
      id: newId(),
      workspaceId: newId(),
      url: receiver.url,
      secret: SECRET,
      thresholdsPct: [],
      creditsBelowUsd: null,
      enabled: true,
      createdAt: new Date(),
      updatedAt: null,
    };
    await store.createWebhook(hook, 20);
    const ids = await store.enqueue(
      Array.from({ length: n }, (_, i) => ({
        webhookId: hook.id,
        workspaceId: hook.workspaceId,
        eventId: `evt_${newId()}`,
        eventType: "webhook.test",
        body: JSON.stringify({ n: i }),
        onceKey: null,
        keepUntil: null,
      })),
      new Date(),
    );
    return { hook, ids };
  }

  async function finished(ids: string[]): Promise<DeliveryRecord[]> {
    const read = () =>
      Promise.all(ids.map(async (id) => (await store.getDelivery(id)) as DeliveryRecord));
    return pollUntil(read, (ds) => ds.every((d) => d.status !== "pending"), 300);
  }

  it("two workers share the queue: every delivery goes out once, signed", async () => {
    receiver.behaviour = { kind: "status", status: 200 };
    const { ids } = await hookWith(24);
    const before = receiver.received.length;
    worker().start();
    worker().start();
    const done = await finished(ids);
    expect(done.map((d) => d.status)).to.deep.equal(ids.map(() => "delivered"));
    expect(done.every((d) => d.attempts === 1)).to.equal(true);
    const got = receiver.received.slice(before);
    expect(got).to.have.length(24);
    expect(new Set(got.map((r) => r.headers["railgate-delivery-id"])).size).to.equal(24);
    expect(got.every((r) => r.verified)).to.equal(true);
  });

  it("holds at most `concurrency` attempts in flight", async () => {
    receiver.behaviour = { kind: "slow", status: 200, delayMs: 300 };
    receiver.maxInFlight = 0;
    const { ids } = await hookWith(8);
    worker({ concurrency: 2 }).start();
    const done = await finished(ids);
    expect(done.every((d) => d.status === "delivered")).to.equal(true);
    expect(receiver.maxInFlight).to.equal(2);
  });

  it("a receiver that answers 500, then refuses connections, then recovers gets the delivery on retry", async () => {
    receiver.behaviour = { kind: "status", status: 500 };
    const { hook, ids } = await hookWith(1);
    const [id] = ids;
    worker().start();
    const read = () => store.getDelivery(String(id)) as Promise<DeliveryRecord>;
    const failing = await pollUntil(read, (d) => d.attempts >= 2, 300);
    expect(failing).to.deep.include({
      status: "pending",
      lastStatusCode: 500,
      lastError: "http_status",
    });
    // Moved to a port nobody listens on: refused, still pending.
    const port = await freePort();
    await store.updateWebhook(hook.id, { url: `http://127.0.0.1:${port}/back` }, new Date());
    const refused = await pollUntil(read, (d) => d.lastError === "connection_refused", 300);
    expect(refused).to.deep.include({ status: "pending", lastStatusCode: null });
    const late = new WebhookReceiver();
    late.secret = SECRET;
    await late.start(port);
    try {
      const done = await pollUntil(read, (d) => d.status === "delivered", 300);
      expect(done).to.deep.include({ status: "delivered", lastStatusCode: 204, lastError: null });
      expect(done.attempts).to.be.at.least(3);
      expect(late.received).to.have.length(1);
      expect(late.received[0]?.verified).to.equal(true);
    } finally {
      await late.close();
    }
  });

  it("a receiver failing past the maximum age: retried with backoff, then failed for good", async () => {
    receiver.behaviour = { kind: "status", status: 503 };
    const { ids } = await hookWith(1);
    worker({ maxAgeMs: 300 }).start();
    const [d] = await finished(ids);
    expect(d).to.deep.include({
      status: "failed",
      lastStatusCode: 503,
      lastError: "http_status",
      nextAttemptAt: null,
      deliveredAt: null,
    });
    expect(d?.attempts).to.be.at.least(2);
  });
});
