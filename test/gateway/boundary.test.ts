import { request as httpRequest } from "node:http";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { useSystem } from "../kit/gateway-harness.js";
import { Api } from "../kit/http.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * Sends the headers and the first part of a large body, never the rest, and
 * resolves with the answer. A gateway that read the body before checking the
 * key would never answer (the test would time out), so an answer proves the
 * key was checked first.
 */
function answerBeforeBody(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: { error?: { code: number; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "6400000", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        });
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE" && err.code !== "ECONNRESET") reject(err);
    });
    // A `trace` array that would be millions of items long, of which 64 KiB ever leave here.
    req.write(
      `{"model":"railgate/espeak-ng","voice":"alloy","input":"x","trace":{"a":[${"1,".repeat(32_768)}`,
    );
  });
}

describe("gateway: the service boundary", function () {
  this.timeout(30_000);
  const h = useSystem();
  let europeOnly: { secret: string; hash: string };

  before(async () => {
    const key = await h.api.post("/api/v1/keys", { name: "europe only" });
    expectStatus(key, 201);
    europeOnly = { secret: key.body.key, hash: key.body.data.hash };
    const g = await h.api.post("/api/v1/guardrails", {
      name: "EU ingress only",
      allowed_data_regions: ["europe"],
    });
    expectStatus(g, 201);
    const assigned = await h.api.post(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`, {
      key_hashes: [europeOnly.hash],
    });
    expectStatus(assigned, 200);
  });

  describe("authentication before any body is read", () => {
    it("answers 401 to a garbage bearer while a 6.4 MB speech body is still arriving", async () => {
      const res = await answerBeforeBody(`${h.baseUrl()}/api/v1/audio/speech`, {
        authorization: "Bearer garbage",
      });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.deep.equal({ code: 401, message: "Invalid API key" });
    });

    it("answers 401 without any key while the body is still arriving", async () => {
      const res = await answerBeforeBody(`${h.baseUrl()}/api/v1/audio/speech`, {});
      expect(res.status).to.equal(401);
    });

    it("answers 403 to a management key on speech while the body is still arriving", async () => {
      const res = await answerBeforeBody(`${h.baseUrl()}/api/v1/audio/speech`, {
        authorization: `Bearer ${MANAGEMENT_KEY}`,
      });
      expect(res.status).to.equal(403);
    });

    it("answers 403 to a key from a region its guardrail refuses while the body is still arriving", async () => {
      const res = await answerBeforeBody(`${h.baseUrl("us")}/api/v1/audio/speech`, {
        authorization: `Bearer ${europeOnly.secret}`,
      });
      expect(res.status).to.equal(403);
      expect(res.body.error?.message).to.match(
        /region "us" are not allowed by guardrail "EU ingress only"/,
      );
    });

    it("answers 401 for a garbage bearer before looking at the body's type or JSON", async () => {
      const res = await h.anon.request("POST", "/api/v1/audio/speech", undefined, {
        headers: { authorization: "Bearer garbage", "content-type": "text/plain" },
        raw: "{not json",
      });
      expectError(res, 401, /Invalid API key/);
    });
  });

  describe("region rule 1 on every request made with a governed key", () => {
    it("refuses GET /key and GET /generation through a region the key's guardrail does not allow", async () => {
      const global = new Api(h.baseUrl("global"), europeOnly.secret);
      expectError(await global.get("/api/v1/key"), 403, /region "global"/);
      expectError(await global.get("/api/v1/generation?id=gen-nope"), 403, /region "global"/);
    });

    it("serves the same key through the region it allows", async () => {
      const europe = new Api(h.baseUrl("europe"), europeOnly.secret);
      const me = await europe.get("/api/v1/key");
      expectStatus(me, 200);
      expect(me.body.data.hash).to.equal(europeOnly.hash);
      expectError(await europe.get("/api/v1/generation?id=gen-nope"), 404);
    });
  });

  describe("key labels", () => {
    it("shows at most 4 characters of the operator's own secret", async () => {
      const me = await h.api.get("/api/v1/key");
      expectStatus(me, 200);
      expect(me.body.data.label).to.equal(`...${MANAGEMENT_KEY.slice(-4)}`);
    });

    it("shows the public prefix and the last 4 characters of a minted secret", async () => {
      const created = await h.api.post("/api/v1/keys", { name: "labelled" });
      expectStatus(created, 201);
      const secret: string = created.body.key;
      const prefix = /^rg-v1-/.exec(secret)?.[0];
      expect(prefix).to.equal("rg-v1-");
      expect(created.body.data.label).to.equal(`rg-v1-...${secret.slice(-4)}`);
      // No run of 5 secret characters appears in the label.
      const body = secret.slice(prefix?.length);
      for (let i = 0; i + 5 <= body.length; i++) {
        expect(created.body.data.label).to.not.include(body.slice(i, i + 5));
      }
    });
  });
});
