import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { metadata, type PlainClient, plainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

// biome-ignore lint/suspicious/noExplicitAny: protobuf JSON
type Json = any;

/**
 * WebhookService to a plain @grpc/grpc-js client: the service checks everything itself, so
 * a gRPC caller gets the HTTP caller's answers (and only a management key gets any).
 */
describe("gRPC: WebhookService (plain @grpc/grpc-js)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let client: PlainClient;
  let standardKey: string;

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url);
    client = plainClient("webhook", system.guardrailGrpcPort);
    const api = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    standardKey = (await api.post("/api/v1/keys", { name: "grpc webhooks" })).body.key;
  });
  after(async () => {
    client?.close();
    await system?.close();
    await redis?.stop();
  });

  /** `key: null` sends no authorization at all. */
  const call = (method: string, req: unknown, key: string | null = MANAGEMENT_KEY) =>
    unary(client, method, req, metadata(key === null ? {} : { key })) as Promise<Json>;

  async function refused(p: Promise<unknown>, code: grpc.status, message: RegExp) {
    const status = await statusOf(p);
    expect(status.code, status.details).to.equal(code);
    expect(status.details).to.match(message);
  }

  it("needs a management key", async () => {
    const req = { url: "https://example.com/hook" };
    await refused(call("CreateWebhook", req, null), grpc.status.UNAUTHENTICATED, /key/i);
    await refused(
      call("CreateWebhook", req, standardKey),
      grpc.status.PERMISSION_DENIED,
      /management key/i,
    );
    await refused(
      call("ListWebhooks", {}, standardKey),
      grpc.status.PERMISSION_DENIED,
      /management/i,
    );
  });

  it("thresholds: unset is 50/80/100, an empty list is none", async () => {
    const byDefault = await call("CreateWebhook", { url: "https://example.com/a" });
    expect(byDefault.webhook.thresholds_pct).to.deep.equal([50, 80, 100]);
    expect(byDefault.secret).to.match(/^whsec_/);
    const none = await call("CreateWebhook", {
      url: "https://example.com/b",
      thresholds_pct: { values: [] },
    });
    expect(none.webhook.thresholds_pct).to.deep.equal([]);
  });

  it("refuses what HTTP refuses, with the same words", async () => {
    await refused(
      call("CreateWebhook", { url: "ftp://example.com/x" }),
      grpc.status.INVALID_ARGUMENT,
      /url must use http or https/,
    );
    await refused(
      call("CreateWebhook", { url: "https://example.com/x", thresholds_pct: { values: [0] } }),
      grpc.status.INVALID_ARGUMENT,
      /thresholds_pct\[0\] must be an integer from 1 to 100/,
    );
    const { webhook } = await call("CreateWebhook", { url: "https://example.com/c" });
    await refused(
      call("UpdateWebhook", { id: webhook.id, enabled: false, update_mask: { paths: [] } }),
      grpc.status.INVALID_ARGUMENT,
      /Update is empty/,
    );
    await refused(
      call("UpdateWebhook", { id: webhook.id, enabled: false, update_mask: { paths: ["url"] } }),
      grpc.status.INVALID_ARGUMENT,
      /enabled is set but update_mask does not name it/,
    );
    await refused(
      call("UpdateWebhook", { id: webhook.id, update_mask: { paths: ["colour"] } }),
      grpc.status.INVALID_ARGUMENT,
      /colour/,
    );
    await refused(
      call("GetWebhook", { id: "00000000-0000-4000-8000-000000000000" }),
      grpc.status.NOT_FOUND,
      /not found/,
    );
    await refused(
      call("ListWebhookDeliveries", { webhook_id: webhook.id, cursor: "%%" }),
      grpc.status.INVALID_ARGUMENT,
      /cursor/,
    );
  });
});
