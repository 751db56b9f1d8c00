import { expect } from "chai";
import { registry } from "../../platform/observability/metrics.js";
import { expectError } from "../kit/expect.js";
import { sleep } from "../kit/poll.js";
import { outcomes, ROUTING, type RoutedModel, useRoutingWorld } from "../kit/routing-world.js";

const TEXT = "Health test.";

/** The breaker gauge of one endpoint: 0 closed, 1 half-open, 2 open (undefined: no series). */
async function breakerGauge(model: string, provider: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric("railgate_speech_endpoint_breaker_state")?.get();
  return metric?.values.find((v) => v.labels.model === model && v.labels.provider === provider)
    ?.value;
}

describe("speech: circuit breakers and retries before the first byte", () => {
  const w = useRoutingWorld();
  const speak = (model: RoutedModel) => w.speak({ model, input: TEXT });
  const explainEndpoints = async (model: RoutedModel) => {
    const res = await w.admin.get(`/api/v1/keys/${w.key.hash}/explain?model=${model}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.models[0].endpoints;
  };
  const coolDown = () => sleep(ROUTING.breakerCooldownMs + 150);

  describe("circuit breaker", () => {
    it(`opens after ${ROUTING.breakerFailures} consecutive failures, skips the endpoint, then lets one probe through and closes`, async () => {
      const model = "health/breaker";
      w.fakes.flaky.behaviour = { kind: "status", status: 500 };
      for (let i = 0; i < ROUTING.breakerFailures; i++) {
        const res = await speak(model);
        expect(res.headers.get("x-railgate-provider")).to.equal("steady");
      }
      expect(w.fakes.flaky.requests).to.have.length(ROUTING.breakerFailures);
      expect((await explainEndpoints(model))[0]).to.include({
        provider: "flaky",
        breaker: "open",
        consecutive_failures: ROUTING.breakerFailures,
      });
      expect(await breakerGauge(model, "flaky")).to.equal(2);

      // Open: skipped without a request, and the record says why.
      const skipped = await speak(model);
      expect(skipped.headers.get("x-railgate-provider")).to.equal("steady");
      expect(w.fakes.flaky.requests).to.have.length(ROUTING.breakerFailures);
      const record = await w.record(skipped);
      expect(record.routing[0]).to.include({ provider: "flaky", outcome: "skipped", attempts: 0 });
      expect(record.routing[0].reason).to.match(
        new RegExp(`^circuit breaker open: ${ROUTING.breakerFailures} consecutive failures`),
      );

      // After the cool-down one request probes it; it answers, and the circuit closes.
      w.fakes.flaky.behaviour = { kind: "audio" };
      await coolDown();
      const probe = await speak(model);
      expect(probe.headers.get("x-railgate-provider")).to.equal("flaky");
      expect((await explainEndpoints(model))[0]).to.include({
        breaker: "closed",
        consecutive_failures: 0,
      });
      expect(await breakerGauge(model, "flaky")).to.equal(0);
      expect((await speak(model)).headers.get("x-railgate-provider")).to.equal("flaky");
    });

    it("opens again for a fresh cool-down when the probe fails", async () => {
      const model = "health/probe-fails";
      w.fakes.flaky.behaviour = { kind: "status", status: 500 };
      for (let i = 0; i < ROUTING.breakerFailures; i++) await speak(model);
      await coolDown();
      const probe = await speak(model);
      expect(probe.headers.get("x-railgate-provider")).to.equal("steady");
      expect(w.fakes.flaky.requests).to.have.length(ROUTING.breakerFailures + 1);
      expect(outcomes(await w.record(probe))[0]).to.deep.equal(["flaky", "failed"]);
      const after = await speak(model);
      expect(w.fakes.flaky.requests, "skipped again at once").to.have.length(
        ROUTING.breakerFailures + 1,
      );
      expect(outcomes(await w.record(after))[0]).to.deep.equal(["flaky", "skipped"]);
    });

    it("is 503 naming the breaker when every eligible endpoint's circuit is open", async () => {
      const model = "health/all-open";
      w.fakes.flaky.behaviour = { kind: "status", status: 500 };
      // One request: its attempt and retries are the consecutive failures that open the circuit.
      expectError(await speak(model), 502, /Provider flaky returned an error \(HTTP 500\)/);
      expect(w.fakes.flaky.requests).to.have.length(ROUTING.retries + 1);
      const res = await speak(model);
      expectError(res, 503, /circuit breaker open/);
      expect(w.fakes.flaky.requests).to.have.length(ROUTING.retries + 1);
      const [failed] = await w.recordsOf(model, 2, "failed");
      expect(failed.refusal_reason).to.equal("upstream_unavailable");
      expect(outcomes(failed)).to.deep.equal([["flaky", "skipped"]]);
    });
  });

  describe("retries before the first byte", () => {
    it("retries a 503 and a 429 with backoff, and succeeds on the third attempt", async () => {
      w.fakes.solo.script.push({ kind: "status", status: 503 }, { kind: "status", status: 429 });
      const res = await speak("health/retry");
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.bytes.byteLength).to.be.above(0);
      expect(w.fakes.solo.requests).to.have.length(3);
      const record = await w.record(res);
      expect(record.routing).to.deep.equal([
        { provider: "solo", outcome: "served", reason: null, attempts: 3, status: null },
      ]);
    });

    it(`gives up after ${ROUTING.retries} retries and answers the provider's error`, async () => {
      w.fakes.solo.behaviour = { kind: "status", status: 503 };
      const res = await speak("health/retry-exhausted");
      expectError(res, 503, /Provider solo is temporarily unavailable/);
      expect(w.fakes.solo.requests).to.have.length(ROUTING.retries + 1);
      const [failed] = await w.recordsOf("health/retry-exhausted", 1, "failed");
      expect(failed.routing).to.deep.equal([
        {
          provider: "solo",
          outcome: "failed",
          reason: "Provider solo is temporarily unavailable (HTTP 503)",
          attempts: ROUTING.retries + 1,
          status: 503,
        },
      ]);
    });

    it("does not retry a 4xx other than 429", async () => {
      w.fakes.solo.behaviour = { kind: "status", status: 400 };
      expectError(await speak("health/not-retryable"), 502, /HTTP 400/);
      expect(w.fakes.solo.requests).to.have.length(1);
    });

    it("never retries, nor fails over, once audio has been sent", async () => {
      for (const model of ["health/after-first-byte", "health/cut-then-steady"] as const) {
        w.fakes.solo.reset();
        w.fakes.solo.behaviour = { kind: "cut", afterChunks: 1 };
        const res = await fetch(`${w.baseUrl}/api/v1/audio/speech`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.key.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ model, voice: "alloy", input: TEXT }),
        });
        expect(res.status).to.equal(200);
        let cut = false;
        try {
          await res.arrayBuffer();
        } catch {
          cut = true;
        }
        expect(cut, "the body ends in an error").to.equal(true);
        const record = await w.recordById(res.headers.get("x-generation-id") ?? "");
        expect(record.status).to.equal("failed");
        expect(record.routing[0]).to.include({ provider: "solo", outcome: "served", attempts: 1 });
        expect(w.fakes.solo.requests, model).to.have.length(1);
      }
      expect(w.fakes.steady.requests).to.have.length(0);
    });
  });
});
