import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { ACME_KEY, HANG_TIMEOUT_MS, MODELS } from "../kit/speech-catalog.js";
import { expectAudio, PCM_TYPE, useSpeechSystem } from "../kit/speech-system.js";

const TEXT = "Upstream error test.";

describe("speech: upstream errors and fail-over", () => {
  const h = useSpeechSystem();
  const speak = (model: string) => h.speak({ model, voice: "alloy", input: TEXT });

  describe("a provider's error status becomes the spec's status", () => {
    for (const [name, provider, status] of [
      ["500", "broken", 502],
      ["503", "unavailable", 503],
      ["529", "overloaded", 529],
      ["429", "limited", 529],
    ] as const) {
      it(`${name} -> ${status}, as { error: { code, message } } naming the provider`, async () => {
        const res = await speak(MODELS[provider]);
        expectError(res, status, new RegExp(`Provider ${provider}\\b`));
        expect(h.fakes[provider].requests).to.have.length(1);
        expect(res.headers.get("x-generation-id")).to.equal(null);
      });
    }
  });

  it(`is 524 when the provider does not answer within its ${HANG_TIMEOUT_MS} ms time-out, and the request is abandoned`, async () => {
    const res = await speak(MODELS.hanging);
    expectError(res, 524, /timed out/);
    const [req] = h.fakes.hanging.requests;
    expect(req, "the provider got the request").to.exist;
    expect(await req?.outcome).to.equal("closed-early");
  });

  it("is 502 when the provider drops the connection", async () => {
    const res = await speak(MODELS.dropping);
    expectError(res, 502, /Provider dropping/);
    expect(h.fakes.dropping.requests).to.have.length(1);
  });

  it("is 502 when the provider refuses our key (401)", async () => {
    const res = await speak(MODELS.locked);
    expectError(res, 502, /Provider locked.*401/);
    expect(h.fakes.locked.requests[0]?.headers).not.to.have.property("authorization");
  });

  it("sends the provider's key, from the variable the catalog names, as a bearer token", async () => {
    const res = await speak(MODELS.basic);
    expectAudio(res);
    expect(h.fakes.acme.requests[0]?.headers.authorization).to.equal(`Bearer ${ACME_KEY}`);
    expect(h.fakes.acme.requests[0]?.path).to.equal("/v1/audio/speech");
  });

  it("is 502 for a provider that cannot be reached", async () => {
    const res = await speak(MODELS.dead);
    expectError(res, 502, /Provider dead could not be reached/);
  });

  describe("fail-over", () => {
    it("answers from the second endpoint when the first cannot be reached", async () => {
      const res = await speak(MODELS.failoverDead);
      expectAudio(res, PCM_TYPE);
      expect(res.headers.get("x-railgate-provider")).to.equal("backup");
      expect(h.fakes.backup.requests).to.have.length(1);
      const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
      expect(record).to.include({ provider: "backup", status: "completed" });
    });

    it("answers from the second endpoint when the first is unavailable (503)", async () => {
      const res = await speak(MODELS.failover503);
      expectAudio(res, PCM_TYPE);
      expect(res.headers.get("x-railgate-provider")).to.equal("backup");
      expect(h.fakes.unavailable.requests).to.have.length(1);
      expect(h.fakes.backup.requests).to.have.length(1);
      expect(h.fakes.backup.requests[0]?.body.input).to.equal(TEXT);
    });

    it("answers the last provider's error when every endpoint fails", async () => {
      h.fakes.backup.behaviour = { kind: "status", status: 529 };
      const res = await speak(MODELS.failover503);
      expectError(res, 529, /Provider backup/);
      expect(h.fakes.unavailable.requests).to.have.length(1);
      expect(h.fakes.backup.requests).to.have.length(1);
    });
  });

  it("cuts the response off and records a failure when the provider dies mid-clip", async () => {
    h.fakes.acme.behaviour = { kind: "cut", afterChunks: 1 };
    const res = await fetch(`${h.baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.basic, voice: "alloy", input: "A clip that breaks." }),
    });
    // The status went out with the first bytes; only a truncated body can tell the client.
    expect(res.status).to.equal(200);
    const id = res.headers.get("x-generation-id") ?? "";
    let failed = false;
    try {
      await res.arrayBuffer();
    } catch {
      failed = true;
    }
    expect(failed, "the body ends in an error, not a clean end").to.equal(true);
    const record = await h.waitForGeneration(id);
    expect(record.status).to.equal("failed");
    expect(record.bytes).to.be.above(0);
  });
});
