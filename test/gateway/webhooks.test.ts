import { expect } from "chai";
import { expectError, expectNoInternals, expectStatus } from "../kit/expect.js";
import { freePort } from "../kit/free-port.js";
import { createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";
import type { Api, JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

const WEBHOOK_KEYS = [
  "id",
  "workspace_id",
  "url",
  "thresholds_pct",
  "credits_below_usd",
  "enabled",
  "secret_hint",
  "created_at",
  "updated_at",
];

const DELIVERY_KEYS = [
  "id",
  "webhook_id",
  "event_id",
  "event_type",
  "status",
  "attempts",
  "last_status_code",
  "last_error",
  "next_attempt_at",
  "created_at",
  "delivered_at",
  "payload",
];

const SECRET = "whsec_gateway_test_secret_0123456789";
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("gateway: budget-alert webhooks", () => {
  // Short retries, so a failing receiver is retried within a test.
  const h = useSystem(
    {
      env: {
        RAILGATE_WEBHOOK_BACKOFF_BASE_MS: "50",
        RAILGATE_WEBHOOK_BACKOFF_MAX_MS: "200",
        RAILGATE_WEBHOOK_WORKER_INTERVAL_MS: "50",
        RAILGATE_WEBHOOK_TIMEOUT_MS: "2000",
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
  beforeEach(() => {
    receiver.behaviour = { kind: "status", status: 204 };
  });

  const create = (body: Record<string, unknown>, api: Api = h.api) =>
    api.post("/api/v1/webhooks", body);
  const path = (id: string) => `/api/v1/webhooks/${id}`;

  async function created(body: Record<string, unknown> = {}) {
    const res = await create({ url: receiver.url, secret: SECRET, ...body });
    expectStatus(res, 201);
    return res.body.data;
  }

  // biome-ignore lint/suspicious/noExplicitAny: delivery JSON
  async function deliveries(id: string, query = ""): Promise<any[]> {
    const res = await h.api.get(`${path(id)}/deliveries${query}`);
    expectStatus(res, 200);
    return res.body.data;
  }

  /** Polls the webhook's deliveries (bounded) until `done` holds of the newest. */
  // biome-ignore lint/suspicious/noExplicitAny: delivery JSON
  async function waitForDelivery(id: string, done: (d: any) => boolean): Promise<any> {
    const list = await pollUntil(
      () => deliveries(id),
      (ds) => ds[0] !== undefined && done(ds[0]),
      200,
    );
    expect(list[0], JSON.stringify(list[0])).to.satisfy(done);
    return list[0];
  }

  describe("POST /webhooks", () => {
    it("answers 201 { data, secret }: a generated secret shown once, thresholds 50/80/100, the default workspace", async () => {
      const res = await create({ url: receiver.url });
      expectStatus(res, 201);
      expect(Object.keys(res.body)).to.deep.equal(["data", "secret"]);
      const { data, secret } = res.body;
      expect(secret).to.match(/^whsec_[0-9a-f]{64}$/);
      expect(Object.keys(data)).to.deep.equal(WEBHOOK_KEYS);
      expect(data).to.deep.include({
        workspace_id: h.system.defaultWorkspaceId,
        url: receiver.url,
        thresholds_pct: [50, 80, 100],
        credits_below_usd: null,
        enabled: true,
        secret_hint: `...${secret.slice(-4)}`,
        updated_at: null,
      });
      const got = await h.api.get(path(data.id));
      expectStatus(got, 200);
      expect(got.body).to.deep.equal({ data });
      expect(JSON.stringify(got.body)).to.not.include(secret);
    });

    it("takes a workspace, a secret, thresholds (stored ascending), a credit floor and enabled", async () => {
      const ws = await createWorkspace(h.api);
      const res = await create({
        workspace_id: ws.id,
        url: "https://alerts.example.com/railgate?team=voice",
        secret: SECRET,
        thresholds_pct: [90, 25],
        credits_below_usd: 12.5,
        enabled: false,
      });
      expectStatus(res, 201);
      expect(res.body.secret).to.equal(SECRET);
      expect(res.body.data).to.deep.include({
        workspace_id: ws.id,
        url: "https://alerts.example.com/railgate?team=voice",
        thresholds_pct: [25, 90],
        credits_below_usd: 12.5,
        enabled: false,
        secret_hint: "...6789",
      });
      // No thresholds at all: credits only.
      expectStatus(
        await create({ url: receiver.url, thresholds_pct: [], credits_below_usd: 1 }),
        201,
      );
    });

    it("answers 400 naming the field and the rule for every bad value", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{}, /url is required/],
        [{ url: "" }, /url is required/],
        [{ url: 42 }, /url must be a string/],
        [{ url: "not a url" }, /url must be an absolute http/],
        [{ url: "ftp://example.com/x" }, /url must use http or https, not "ftp"/],
        [{ url: "file:///etc/passwd" }, /url must use http or https/],
        [{ url: "https://user:hunter2@example.com/x" }, /url must not carry credentials/],
        [{ url: "https://example.com/x#frag" }, /url must not have a #fragment/],
        [{ url: `https://example.com/${"a".repeat(2048)}` }, /url must be at most 2048 characters/],
        [{ url: receiver.url, secret: "short" }, /secret must be 16 to 256/],
        [
          { url: receiver.url, secret: "with spaces in the secret" },
          /secret must be 16 to 256 printable/,
        ],
        [{ url: receiver.url, secret: "x".repeat(257) }, /secret must be 16 to 256/],
        [{ url: receiver.url, thresholds_pct: 50 }, /thresholds_pct must be an array/],
        [
          { url: receiver.url, thresholds_pct: [0] },
          /thresholds_pct\[0\] must be an integer from 1 to 100/,
        ],
        [
          { url: receiver.url, thresholds_pct: [50, 101] },
          /thresholds_pct\[1\] must be an integer from 1 to 100/,
        ],
        [{ url: receiver.url, thresholds_pct: [1.5] }, /thresholds_pct\[0\] must be an integer/],
        [{ url: receiver.url, thresholds_pct: ["50"] }, /thresholds_pct\[0\] must be an integer/],
        [{ url: receiver.url, thresholds_pct: [50, 50] }, /thresholds_pct must not repeat a value/],
        [
          { url: receiver.url, thresholds_pct: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
          /thresholds_pct must hold at most 10 values/,
        ],
        [{ url: receiver.url, credits_below_usd: -1 }, /credits_below_usd must be a number from 0/],
        [
          { url: receiver.url, credits_below_usd: 1e10 },
          /credits_below_usd must be a number from 0/,
        ],
        [
          { url: receiver.url, credits_below_usd: "5" },
          /credits_below_usd must be a finite number or null/,
        ],
        [{ url: receiver.url, enabled: "yes" }, /enabled must be true or false/],
        [{ url: receiver.url, workspace_id: MISSING }, /workspace_id ".*" does not exist/],
        [{ url: receiver.url, workspace_id: "nope" }, /workspace_id "nope" does not exist/],
        [{ url: receiver.url, colour: "red" }, /Unknown field "colour"/],
      ];
      for (const [body, message] of cases) {
        const res = await create(body);
        expectError(res, 400, message);
        expectNoInternals(res.body.error.message);
      }
    });

    it("never echoes a password it refuses", async () => {
      const res = await create({ url: "https://admin:s3cr3t-pw@example.com/x" });
      expectError(res, 400, /credentials/);
      expect(JSON.stringify(res.body)).to.not.include("s3cr3t-pw");
    });

    it("refuses a 21st webhook in one workspace with 409", async () => {
      const ws = await createWorkspace(h.api);
      for (let i = 0; i < 20; i++)
        expectStatus(await create({ workspace_id: ws.id, url: receiver.url }), 201);
      expectError(await create({ workspace_id: ws.id, url: receiver.url }), 409, /20 webhooks/);
    });
  });

  describe("management key only", () => {
    it("answers 401 without a key and 403 with a standard key, on every route", async () => {
      const hook = await created();
      const key = await createKey(h.api, {});
      const standard = h.api.withKey(key.secret);
      const calls: [string, string][] = [
        ["GET", "/api/v1/webhooks"],
        ["POST", "/api/v1/webhooks"],
        ["GET", path(hook.id)],
        ["PATCH", path(hook.id)],
        ["DELETE", path(hook.id)],
        ["GET", `${path(hook.id)}/deliveries`],
        ["POST", `${path(hook.id)}/test`],
      ];
      for (const [method, p] of calls) {
        const body = method === "GET" || method === "DELETE" ? undefined : { url: receiver.url };
        expectError(await h.anon.request(method, p, body), 401);
        expectError(await standard.request(method, p, body), 403);
      }
      expectStatus(await h.api.get(path(hook.id)), 200);
    });
  });

  describe("GET /webhooks", () => {
    it("pages a workspace's webhooks in creation order with total_count", async () => {
      const ws = await createWorkspace(h.api);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await created({ workspace_id: ws.id })).id);
      const first = await h.api.get(`/api/v1/webhooks?workspace_id=${ws.id}&limit=2`);
      expectStatus(first, 200);
      expect(first.body.total_count).to.equal(3);
      expect(first.body.data.map((w: { id: string }) => w.id)).to.deep.equal(ids.slice(0, 2));
      const rest = await h.api.get(`/api/v1/webhooks?workspace_id=${ws.id}&offset=2`);
      expect(rest.body.data.map((w: { id: string }) => w.id)).to.deep.equal(ids.slice(2));
      const all = await h.api.get("/api/v1/webhooks?limit=100");
      expect(all.body.total_count).to.be.at.least(3);
    });

    it("answers 400 for bad paging or workspace_id", async () => {
      expectError(await h.api.get("/api/v1/webhooks?limit=0"), 400, /limit/);
      expectError(await h.api.get("/api/v1/webhooks?limit=101"), 400, /limit/);
      expectError(await h.api.get("/api/v1/webhooks?offset=-1"), 400, /offset/);
      expectError(await h.api.get("/api/v1/webhooks?workspace_id=x"), 400, /workspace_id/);
      expectError(await h.api.get("/api/v1/webhooks?colour=red"), 400, /colour/);
    });
  });

  describe("PATCH /webhooks/:id", () => {
    it("changes only the fields sent; null clears the credit floor; a secret rotates", async () => {
      const hook = await created({ credits_below_usd: 5 });
      const res = await h.api.patch(path(hook.id), {
        thresholds_pct: [75],
        credits_below_usd: null,
        enabled: false,
      });
      expectStatus(res, 200);
      expect(res.body.data).to.deep.include({
        id: hook.id,
        url: hook.url,
        thresholds_pct: [75],
        credits_below_usd: null,
        enabled: false,
        secret_hint: hook.secret_hint,
      });
      expect(res.body.data.updated_at).to.be.a("string");
      const rotated = await h.api.patch(path(hook.id), {
        secret: "whsec_rotated_secret_abcdefWXYZ",
        url: "http://127.0.0.1:9/other",
      });
      expect(rotated.body.data).to.deep.include({
        secret_hint: "...WXYZ",
        url: "http://127.0.0.1:9/other",
        thresholds_pct: [75],
      });
      expect((await h.api.get(path(hook.id))).body.data).to.deep.equal(rotated.body.data);
    });

    it("answers 400 for an empty update and for bad values, changing nothing", async () => {
      const hook = await created();
      expectError(await h.api.patch(path(hook.id), {}), 400, /Update is empty/);
      expectError(await h.api.patch(path(hook.id), { url: "gopher://x" }), 400, /url must use/);
      expectError(await h.api.patch(path(hook.id), { url: null }), 400, /url must be a string/);
      expectError(await h.api.patch(path(hook.id), { secret: null }), 400, /secret/);
      expectError(await h.api.patch(path(hook.id), { enabled: null }), 400, /enabled/);
      expectError(
        await h.api.patch(path(hook.id), { thresholds_pct: [200] }),
        400,
        /thresholds_pct\[0\]/,
      );
      expectError(
        await h.api.patch(path(hook.id), { workspace_id: MISSING }),
        400,
        /Unknown field "workspace_id"/,
      );
      expect((await h.api.get(path(hook.id))).body.data).to.deep.equal(hook);
    });
  });

  describe("audit log", () => {
    it("records create, update and delete with the changed fields, never the secret", async () => {
      const hook = await created({ credits_below_usd: 3 });
      const rotated = "whsec_rotated_for_audit_abcdefQRST";
      expectStatus(
        await h.api.request(
          "PATCH",
          path(hook.id),
          { secret: rotated, enabled: false },
          { headers: { "x-request-id": "audit-webhook-patch" } },
        ),
        200,
      );
      expectStatus(await h.api.delete(path(hook.id)), 200);
      const log = await pollUntil(
        () => h.api.get(`/api/v1/audit-log?resource_type=webhook&resource_id=${hook.id}`),
        (r) => r.body.data?.length === 3,
      );
      expectStatus(log, 200);
      const byAction = Object.fromEntries(
        log.body.data.map((e: { action: string }) => [e.action, e]),
      );
      expect(Object.keys(byAction).sort()).to.deep.equal([
        "webhook.create",
        "webhook.delete",
        "webhook.update",
      ]);
      const update = byAction["webhook.update"];
      expect(update).to.deep.include({
        workspace_id: hook.workspace_id,
        request_id: "audit-webhook-patch",
      });
      expect(update.resource).to.deep.equal({ type: "webhook", id: hook.id, label: hook.url });
      expect(update.changes).to.deep.equal({
        enabled: { before: true, after: false },
        secret_hint: { before: "[redacted]", after: "[redacted]" },
      });
      expect(byAction["webhook.create"].changes.credits_below_usd).to.deep.equal({
        before: null,
        after: 3,
      });
      expect(byAction["webhook.delete"].changes.url).to.deep.equal({
        before: hook.url,
        after: null,
      });
      const text = JSON.stringify(log.body);
      for (const secret of [SECRET, rotated]) expect(text).to.not.include(secret);
    });
  });

  describe("404s", () => {
    it("answers 404 for a webhook that does not exist, on every route", async () => {
      for (const id of [MISSING, "not-a-uuid"]) {
        expectError(await h.api.get(path(id)), 404, /webhook .* not found/);
        expectError(await h.api.patch(path(id), { enabled: true }), 404, /not found/);
        expectError(await h.api.delete(path(id)), 404, /not found/);
        expectError(await h.api.get(`${path(id)}/deliveries`), 404, /not found/);
        expectError(await h.api.post(`${path(id)}/test`, {}), 404, /not found/);
      }
    });

    it("DELETE answers { deleted: true }, then the webhook and its deliveries are gone", async () => {
      const hook = await created();
      expectStatus(await h.api.post(`${path(hook.id)}/test`, {}), 202);
      const res = await h.api.delete(path(hook.id));
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ deleted: true });
      expectError(await h.api.get(path(hook.id)), 404);
      expectError(await h.api.get(`${path(hook.id)}/deliveries`), 404);
    });
  });

  describe("deliveries", () => {
    it("POST /test sends a signed webhook.test event the receiver verifies; the delivery shows it", async () => {
      const hook = await created();
      const res = await h.api.post(`${path(hook.id)}/test`, {});
      expectStatus(res, 202);
      const queued = res.body.data;
      expect(Object.keys(queued)).to.deep.equal(DELIVERY_KEYS);
      expect(queued).to.include({
        webhook_id: hook.id,
        event_type: "webhook.test",
        status: "pending",
      });
      const got = await receiver.waitFor((r) => r.some((x) => x.event?.id === queued.event_id));
      const request = got.find((x) => x.event?.id === queued.event_id);
      expect(request?.verified, "signature verifies with the webhook's secret").to.equal(true);
      // The delivery shows the event as the receiver got it.
      expect(queued.payload).to.deep.equal(request?.event);
      expect(request?.headers["railgate-signature"]).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(request?.event).to.deep.include({
        id: queued.event_id,
        type: "webhook.test",
        workspace_id: hook.workspace_id,
      });
      expect(request?.headers["x-request-id"]).to.match(/^[0-9a-f-]{36}$/);
      const delivered = await waitForDelivery(hook.id, (d) => d.status === "delivered");
      expect(delivered).to.deep.include({
        id: queued.id,
        attempts: 1,
        last_status_code: 204,
        last_error: null,
        next_attempt_at: null,
      });
      expect(delivered.delivered_at).to.be.a("string");
    });

    it("a receiver answering 500 is retried with backoff until it recovers", async () => {
      const hook = await created();
      receiver.behaviour = { kind: "status", status: 500 };
      const queued = (await h.api.post(`${path(hook.id)}/test`, {})).body.data;
      const failing = await waitForDelivery(hook.id, (d) => d.attempts >= 2);
      expect(failing).to.deep.include({
        status: "pending",
        last_status_code: 500,
        last_error: "http_status",
      });
      expect(failing.next_attempt_at).to.be.a("string");
      receiver.behaviour = { kind: "status", status: 200 };
      const delivered = await waitForDelivery(hook.id, (d) => d.status === "delivered");
      expect(delivered.last_status_code).to.equal(200);
      const attempts = receiver.received.filter((r) => r.event?.id === queued.event_id);
      expect(attempts.length).to.equal(delivered.attempts);
      expect(attempts.every((a) => a.verified)).to.equal(true);
      // Each attempt is signed afresh; the body is the same event.
      expect(new Set(attempts.map((a) => a.raw)).size).to.equal(1);
    });

    it("counts attempts by outcome in /metrics", async () => {
      const count = async (outcome: string) => {
        const res = await fetch(`${h.baseUrl()}/metrics`, {
          headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
        });
        const line = new RegExp(
          `^railgate_webhook_attempts_total\\{outcome="${outcome}"\\} (\\d+)`,
          "m",
        );
        return Number(line.exec(await res.text())?.[1] ?? 0);
      };
      const before = { delivered: await count("delivered"), retry: await count("retry") };
      const hook = await created();
      receiver.behaviour = { kind: "status", status: 500 };
      await h.api.post(`${path(hook.id)}/test`, {});
      await waitForDelivery(hook.id, (d) => d.attempts >= 1 && d.last_status_code === 500);
      receiver.behaviour = { kind: "status", status: 204 };
      await waitForDelivery(hook.id, (d) => d.status === "delivered");
      expect(await count("retry")).to.be.at.least(before.retry + 1);
      expect(await count("delivered")).to.be.at.least(before.delivered + 1);
    });

    it("a refused connection is retried, and delivered once a receiver listens", async () => {
      const port = await freePort();
      const hook = await created({ url: `http://127.0.0.1:${port}/late` });
      await h.api.post(`${path(hook.id)}/test`, {});
      const failing = await waitForDelivery(hook.id, (d) => d.attempts >= 2);
      expect(failing).to.deep.include({
        status: "pending",
        last_status_code: null,
        last_error: "connection_refused",
      });
      const late = new WebhookReceiver();
      late.secret = SECRET;
      await late.start(port);
      try {
        await waitForDelivery(hook.id, (d) => d.status === "delivered");
        expect(late.received.length).to.be.at.least(1);
        expect(late.received[0]?.verified).to.equal(true);
      } finally {
        await late.close();
      }
    });

    it("a redirect is a failed attempt, never followed", async () => {
      const other = new WebhookReceiver();
      await other.start();
      try {
        const hook = await created();
        receiver.behaviour = { kind: "status", status: 302, headers: { location: other.url } };
        await h.api.post(`${path(hook.id)}/test`, {});
        const failing = await waitForDelivery(
          hook.id,
          (d) => d.attempts >= 1 && d.last_status_code,
        );
        expect(failing).to.deep.include({ last_status_code: 302, last_error: "redirect" });
        expect(other.received).to.deep.equal([]);
      } finally {
        await other.close();
      }
    });

    it("pages deliveries newest first by cursor; a bad cursor or limit is 400", async () => {
      const hook = await created();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await h.api.post(`${path(hook.id)}/test`, {})).body.data.id);
      const first = await h.api.get(`${path(hook.id)}/deliveries?limit=2`);
      expectStatus(first, 200);
      expect(Object.keys(first.body)).to.deep.equal(["data", "next_cursor"]);
      expect(first.body.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[2], ids[1]]);
      expect(first.body.next_cursor).to.be.a("string");
      const second = await h.api.get(
        `${path(hook.id)}/deliveries?limit=2&cursor=${first.body.next_cursor}`,
      );
      expect(second.body.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[0]]);
      expect(second.body.next_cursor).to.equal(null);
      const bad = (query: string): Promise<JsonResponse> =>
        h.api.get(`${path(hook.id)}/deliveries?${query}`);
      expectError(await bad("cursor=garbage!"), 400, /cursor/);
      expectError(await bad(`cursor=${Buffer.from("1.x").toString("base64url")}`), 400, /cursor/);
      expectError(await bad("limit=0"), 400, /limit/);
      expectError(await bad("limit=101"), 400, /limit/);
      expectError(await bad("offset=1"), 400, /offset/);
    });
  });
});
