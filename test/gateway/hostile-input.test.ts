import { request as httpRequest } from "node:http";
import { expect } from "chai";
import { HTTP_LIMITS } from "../../domain/limits.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { createKey, useSystem } from "../kit/gateway-harness.js";
import type { JsonResponse } from "../kit/http.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** A request whose target is sent byte for byte, as fetch() would never send it. */
function rawTarget(port: number, method: string, target: string, key?: string) {
  return new Promise<JsonResponse>((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path: target,
        headers: key ? { authorization: `Bearer ${key}` } : {},
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (typeof v === "string") headers.set(k, v);
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: the assertion shows the text
          }
          resolve({ status: res.statusCode ?? 0, headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("gateway: hostile input gets a clear 4xx", () => {
  const h = useSystem();

  describe("numbers beyond the protobuf field's range", () => {
    for (const value of [2 ** 31, 2 ** 40, -(2 ** 31) - 1, 1e300]) {
      it(`POST /keys rate_limit_per_minute ${value} is 400 naming the field and the range`, async () => {
        const res = await h.api.post("/api/v1/keys", { name: "r", rate_limit_per_minute: value });
        expectError(
          res,
          400,
          /^rate_limit_per_minute must be an integer from -2147483648 to 2147483647/,
        );
      });
    }

    it("PATCH /keys/{hash} rate_limit_per_minute beyond int32 is 400 too", async () => {
      const { data } = await createKey(h.api);
      const res = await h.api.patch(`/api/v1/keys/${data.hash}`, {
        rate_limit_per_minute: 2 ** 40,
      });
      expectError(
        res,
        400,
        /^rate_limit_per_minute must be an integer from -2147483648 to 2147483647/,
      );
    });

    it("query offset and limit beyond int32 are 400 naming the parameter", async () => {
      expectError(
        await h.api.get("/api/v1/keys?offset=99999999999999"),
        400,
        /^offset must be an integer from/,
      );
      expectError(
        await h.api.get(`/api/v1/workspaces?limit=${"9".repeat(400)}`),
        400,
        /^limit must be an integer/,
      );
    });
  });

  describe("huge values are never echoed whole", () => {
    const huge = "w".repeat(70_000);
    const cases: [string, string, string, unknown][] = [
      ["POST", "/api/v1/keys", "workspace_id", { name: "k", workspace_id: huge }],
      ["POST", "/api/v1/guardrails", "workspace_id", { name: "g", workspace_id: huge }],
      ["POST", "/api/v1/keys", "unknown field", { [huge]: 1 }],
      [
        "POST",
        "/api/v1/guardrails",
        "builtin slug",
        { name: "g", content_filter_builtins: [{ slug: huge, action: "block" }] },
      ],
      [
        "POST",
        "/api/v1/guardrails",
        "reset_interval",
        { name: "g", limit_usd: 1, reset_interval: huge },
      ],
      ["PATCH", `/api/v1/workspaces/${huge.slice(0, 7000)}`, "path id", { name: "x" }],
    ];
    for (const [method, path, what, body] of cases) {
      it(`${method} ${path.slice(0, 30)} with a 70,000-character ${what}: 4xx, message <= 1,000 chars`, async () => {
        const requests = [h.api.request(method, path, body)];
        // Other requests at the same time are unaffected.
        for (let i = 0; i < 5; i++) requests.push(h.api.get("/api/v1/workspaces"));
        const [bad, ...others] = await Promise.all(requests);
        expect(bad?.status).to.be.within(400, 499);
        expectError(bad as JsonResponse, bad?.status ?? 0);
        expect(bad?.body.error.message.length).to.be.at.most(1000);
        expect(bad?.body.error.message).not.to.include("w".repeat(200));
        for (const res of others) expectStatus(res, 200);
      });
    }
  });

  describe("request targets", () => {
    const port = () => h.system.gatewayPorts.global;
    const cases: [string, string, number][] = [
      ["GET", "//[", 400],
      ["GET", "//host/api/v1/keys", 400],
      ["GET", "http://x/api/v1/keys", 400],
      ["OPTIONS", "*", 400],
      ["GET", "/api/v1/../v1/keys", 400],
      ["GET", "/api/v1/%2e%2e/v1/keys", 400],
      ["GET", "/api/v1/./keys", 400],
      ["GET", "/api//v1/keys", 404],
      ["GET", "/api/v1/keys/", 404],
      ["GET", "/api/v1\\keys", 400],
      ["GET", `/api/v1/${"a".repeat(HTTP_LIMITS.targetMaxChars)}`, 414],
      ["GET", `/api/v1/${"a".repeat(20_000)}`, 431],
    ];
    for (const [method, target, status] of cases) {
      it(`${method} ${target.slice(0, 40)}${target.length > 40 ? "…" : ""} is ${status} with the error shape, never routed elsewhere`, async () => {
        const res = await rawTarget(port(), method, target, MANAGEMENT_KEY);
        expectError(res, status);
        expect(res.body.error.message.length).to.be.at.most(1000);
      });
    }

    it("still serves the plain path and its query", async () => {
      const res = await rawTarget(port(), "GET", "/api/v1/keys?limit=1", MANAGEMENT_KEY);
      expectStatus(res, 200);
      expect(res.body.data).to.have.length(1);
    });
  });
});
