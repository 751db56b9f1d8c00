import { request } from "node:http";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON shapes
  body: any;
}

/** node:http rather than fetch: what a browser sends (Origin included) is set exactly as given. */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: text ? JSON.parse(text) : undefined,
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const APP = "https://app.example.com";
const EXPOSED = [
  "X-Generation-Id",
  "Retry-After",
  "X-Request-Id",
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "X-Railgate-Model",
  "X-Railgate-Provider",
  "Idempotent-Replayed",
];

function preflight(port: number, path: string, origin: string, method = "GET") {
  return send(port, "OPTIONS", path, {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "authorization, content-type",
  });
}

/** One system per RAILGATE_CORS_ORIGINS value, on a throwaway Redis. */
function withCorsOrigins(value: string | undefined): () => number {
  let redis: LaneStore;
  let system: RunningSystem;
  before(async () => {
    redis = await startLaneStore();
    system = await startTestSystem(redis.url, {
      env: value === undefined ? {} : { RAILGATE_CORS_ORIGINS: value },
    });
  });
  after(async () => {
    await system?.close();
    await redis?.stop();
  });
  return () => system.gatewayPorts.global;
}

describe("gateway: CORS", () => {
  describe(`with RAILGATE_CORS_ORIGINS=${APP},http://localhost:5173`, () => {
    const port = withCorsOrigins(`${APP},http://localhost:5173`);

    it("answers a preflight with 204, the origin, the route's methods and the allowed headers, without a key", async () => {
      const res = await preflight(port(), "/api/v1/guardrails/g-123", APP, "PATCH");
      expect(res.status).to.equal(204);
      expect(res.body).to.equal(undefined);
      expect(res.headers["access-control-allow-origin"]).to.equal(APP);
      expect(res.headers.vary).to.equal("Origin");
      expect(res.headers["access-control-allow-methods"]).to.equal("GET, PATCH, DELETE");
      expect(res.headers["access-control-allow-headers"]).to.equal(
        "authorization, content-type, x-request-id, x-session-id, idempotency-key",
      );
      expect(res.headers["access-control-max-age"]).to.match(/^[1-9]\d*$/);
      expect(res.headers["access-control-allow-credentials"]).to.equal(undefined);
    });

    it("gives each route its own methods (speech: POST only; the second listed origin too)", async () => {
      const speech = await preflight(
        port(),
        "/api/v1/audio/speech",
        "http://localhost:5173",
        "POST",
      );
      expect(speech.status).to.equal(204);
      expect(speech.headers["access-control-allow-origin"]).to.equal("http://localhost:5173");
      expect(speech.headers["access-control-allow-methods"]).to.equal("POST");
      const keys = await preflight(port(), "/api/v1/keys", APP);
      expect(keys.headers["access-control-allow-methods"]).to.equal("GET, POST");
    });

    it("refuses a preflight from an unlisted origin with 403 naming it, and no CORS headers", async () => {
      const res = await preflight(port(), "/api/v1/keys", "https://evil.example");
      expect(res.status).to.equal(403);
      expect(res.body).to.deep.equal({
        error: {
          code: 403,
          message: 'Origin "https://evil.example" is not allowed (RAILGATE_CORS_ORIGINS)',
        },
      });
      expect(res.headers["access-control-allow-origin"]).to.equal(undefined);
      expect(res.headers["access-control-allow-methods"]).to.equal(undefined);
    });

    it("answers a preflight for a path with no route with 404", async () => {
      const res = await preflight(port(), "/api/v1/nothing-here", APP);
      expect(res.status).to.equal(404);
      expect(res.body.error.message).to.equal('No route for "/api/v1/nothing-here"');
    });

    it("puts Allow-Origin and the exposed headers on actual responses, errors included", async () => {
      const ok = await send(port(), "GET", "/api/v1/keys", {
        origin: APP,
        authorization: `Bearer ${MANAGEMENT_KEY}`,
      });
      expect(ok.status).to.equal(200);
      expect(ok.headers["access-control-allow-origin"]).to.equal(APP);
      expect(ok.headers.vary).to.equal("Origin");
      const exposed = String(ok.headers["access-control-expose-headers"]).split(", ");
      expect(exposed).to.deep.equal(EXPOSED);
      // A page must be able to read why it was refused.
      const refused = await send(port(), "GET", "/api/v1/keys", { origin: APP });
      expect(refused.status).to.equal(401);
      expect(refused.headers["access-control-allow-origin"]).to.equal(APP);
    });

    it("gives an unlisted origin's actual request no CORS headers (the browser withholds the answer)", async () => {
      const res = await send(port(), "GET", "/api/v1/keys", {
        origin: "https://evil.example",
        authorization: `Bearer ${MANAGEMENT_KEY}`,
      });
      expect(res.headers["access-control-allow-origin"]).to.equal(undefined);
      expect(res.headers["access-control-expose-headers"]).to.equal(undefined);
    });

    it("does not take an OPTIONS without Access-Control-Request-Method for a preflight", async () => {
      const res = await send(port(), "OPTIONS", "/api/v1/keys", { origin: APP });
      expect(res.status).to.equal(405);
      expect(res.headers.allow).to.equal("GET, POST");
    });
  });

  describe("with RAILGATE_CORS_ORIGINS=*", () => {
    const port = withCorsOrigins("*");

    it("allows any origin with Allow-Origin: *", async () => {
      const pre = await preflight(port(), "/api/v1/models", "https://anyone.example");
      expect(pre.status).to.equal(204);
      expect(pre.headers["access-control-allow-origin"]).to.equal("*");
      const res = await send(port(), "GET", "/healthz", { origin: "https://anyone.example" });
      expect(res.headers["access-control-allow-origin"]).to.equal("*");
    });
  });

  describe("without RAILGATE_CORS_ORIGINS", () => {
    const port = withCorsOrigins(undefined);

    it("adds no CORS header at all, and a preflight is an ordinary 405", async () => {
      const pre = await preflight(port(), "/api/v1/keys", APP);
      expect(pre.status).to.equal(405);
      const res = await send(port(), "GET", "/api/v1/keys", {
        origin: APP,
        authorization: `Bearer ${MANAGEMENT_KEY}`,
      });
      expect(res.status).to.equal(200);
      for (const headers of [pre.headers, res.headers]) {
        expect(Object.keys(headers).filter((h) => h.startsWith("access-control-"))).to.deep.equal(
          [],
        );
        expect(headers.vary).to.equal(undefined);
      }
    });
  });
});
