import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { REGION_NAMES } from "../../domain/enums.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, createKey, useSystem } from "../kit/gateway-harness.js";
import { Api } from "../kit/http.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

describe("gateway: authentication, authorization and regional listeners", () => {
  const h = useSystem();
  let guardrailId: string;
  let keyHash: string;
  let standardSecret: string;
  let managementRoutes: [string, string, unknown?][];

  before(async () => {
    guardrailId = (await createGuardrail(h.api)).id;
    const key = await createKey(h.api);
    keyHash = key.data.hash;
    standardSecret = key.secret;
    const ws = h.system.defaultWorkspaceId;
    managementRoutes = [
      ["GET", "/api/v1/guardrails"],
      ["POST", "/api/v1/guardrails", { name: "x" }],
      ["GET", `/api/v1/guardrails/${guardrailId}`],
      ["PATCH", `/api/v1/guardrails/${guardrailId}`, { name: "x" }],
      ["DELETE", `/api/v1/guardrails/${guardrailId}`],
      ["GET", "/api/v1/guardrails/assignments/keys"],
      ["GET", "/api/v1/guardrails/assignments/members"],
      ["GET", `/api/v1/guardrails/${guardrailId}/assignments/keys`],
      ["POST", `/api/v1/guardrails/${guardrailId}/assignments/keys`, { key_hashes: [keyHash] }],
      [
        "POST",
        `/api/v1/guardrails/${guardrailId}/assignments/keys/remove`,
        { key_hashes: [keyHash] },
      ],
      ["GET", `/api/v1/guardrails/${guardrailId}/assignments/members`],
      ["POST", `/api/v1/guardrails/${guardrailId}/assignments/members`, { member_user_ids: ["u"] }],
      [
        "POST",
        `/api/v1/guardrails/${guardrailId}/assignments/members/remove`,
        { member_user_ids: ["u"] },
      ],
      ["GET", "/api/v1/keys"],
      ["POST", "/api/v1/keys", { name: "x", kind: "management" }],
      ["GET", `/api/v1/keys/${keyHash}`],
      ["PATCH", `/api/v1/keys/${keyHash}`, { disabled: true }],
      ["DELETE", `/api/v1/keys/${keyHash}`],
      ["GET", "/api/v1/workspaces"],
      ["POST", "/api/v1/workspaces", { name: "x" }],
      ["GET", `/api/v1/workspaces/${ws}`],
      ["PATCH", `/api/v1/workspaces/${ws}`, { name: "x" }],
      ["DELETE", `/api/v1/workspaces/${ws}`],
    ];
  });

  /** Nothing a rejected caller sent may have changed anything. */
  afterEach(async () => {
    expectStatus(await h.api.get(`/api/v1/guardrails/${guardrailId}`), 200);
    const key = await h.api.get(`/api/v1/keys/${keyHash}`);
    expectStatus(key, 200);
    expect(key.body.data.disabled).to.equal(false);
    expectStatus(await h.api.get(`/api/v1/workspaces/${h.system.defaultWorkspaceId}`), 200);
  });

  describe("credentials", () => {
    it("answers 401 on every management route without an Authorization header", async () => {
      for (const [method, path, body] of managementRoutes) {
        expectError(await h.anon.request(method, path, body), 401, /Missing API key/);
      }
      expectError(await h.anon.get("/api/v1/key"), 401);
    });

    it("answers 401 for an unknown key", async () => {
      const stranger = h.api.withKey(`rg-v1-${"0".repeat(64)}`);
      for (const [method, path, body] of managementRoutes) {
        expectError(await stranger.request(method, path, body), 401, /Invalid API key/);
      }
      expectError(await stranger.get("/api/v1/key"), 401);
    });

    it("answers 401 for a malformed Authorization header", async () => {
      for (const authorization of [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer ",
        `Bearer ${MANAGEMENT_KEY} extra`,
        MANAGEMENT_KEY,
        `Token ${MANAGEMENT_KEY}`,
      ]) {
        const res = await h.anon.request("GET", "/api/v1/guardrails", undefined, {
          headers: { authorization },
        });
        expectError(res, 401);
      }
    });

    it("accepts the scheme in any case", async () => {
      const res = await h.anon.request("GET", "/api/v1/guardrails", undefined, {
        headers: { authorization: `bearer ${MANAGEMENT_KEY}` },
      });
      expectStatus(res, 200);
    });

    it("checks credentials before looking anything up (401, not 404)", async () => {
      expectError(await h.anon.get(`/api/v1/guardrails/${randomUUID()}`), 401);
      expectError(await h.anon.patch(`/api/v1/guardrails/${randomUUID()}`, { name: "x" }), 401);
    });
  });

  describe("key kinds", () => {
    it("answers 403 to a standard key on every management route", async () => {
      const standard = h.api.withKey(standardSecret);
      for (const [method, path, body] of managementRoutes) {
        const res = await standard.request(method, path, body);
        expectError(res, 403, /management key/);
      }
    });

    it("lets a standard key ask about itself", async () => {
      const res = await h.api.withKey(standardSecret).get("/api/v1/key");
      expectStatus(res, 200);
      expect(res.body.data.hash).to.equal(keyHash);
      expect(res.body.data.kind).to.equal("standard");
    });
  });

  describe("regional listeners", () => {
    for (const region of REGION_NAMES) {
      it(`answers /healthz on the ${region} listener with its own region, without a key`, async () => {
        const res = await new Api(h.baseUrl(region)).get("/healthz");
        expectStatus(res, 200);
        expect(res.body).to.deep.equal({ status: "ok", region });
      });
    }

    it("listens on three distinct ports", () => {
      const ports = Object.values(h.system.gatewayPorts);
      expect(new Set(ports).size).to.equal(3);
    });

    it("does not let a header choose the region", async () => {
      const res = await new Api(h.baseUrl("us")).request("GET", "/healthz", undefined, {
        headers: {
          "x-region": "europe",
          "x-railgate-region": "europe",
          "railgate-ingress-region": "europe",
          "railgate-internal-token": "guess",
          "x-forwarded-host": "eu.example.com",
          host: "eu.example.com",
        },
      });
      expect(res.body.region).to.equal("us");
    });

    it("serves the management API on every listener", async () => {
      for (const region of ["europe", "us"] as const) {
        const api = new Api(h.baseUrl(region), MANAGEMENT_KEY);
        const res = await api.get(`/api/v1/guardrails/${guardrailId}`);
        expectStatus(res, 200);
        expect(res.body.data.id).to.equal(guardrailId);
        expectError(await new Api(h.baseUrl(region)).get("/api/v1/guardrails"), 401);
      }
    });
  });
});
