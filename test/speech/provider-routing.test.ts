import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { outcomes, type RoutedModel, useRoutingWorld } from "../kit/routing-world.js";

const TEXT = "Routing test.";

describe("speech: provider routing (OpenRouter's provider object)", () => {
  const w = useRoutingWorld();
  const speak = (model: RoutedModel, provider?: Record<string, unknown>) =>
    w.speak({ model, input: TEXT, ...(provider ? { provider } : {}) });
  const servedBy = (res: Awaited<ReturnType<typeof speak>>) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.headers.get("x-railgate-provider");
  };

  describe("sort", () => {
    it("without sort or order, tries endpoints in catalog order", async () => {
      expect(servedBy(await speak("route/sort-price"))).to.equal("pricey");
    });

    it('"price" picks the cheapest endpoint, and lists the others as not tried in price order', async () => {
      const res = await speak("route/sort-price", { sort: "price" });
      expect(servedBy(res)).to.equal("cheap");
      expect(w.fakes.pricey.requests).to.have.length(0);
      const record = await w.record(res);
      expect(outcomes(record)).to.deep.equal([
        ["cheap", "served"],
        ["mid", "not_tried"],
        ["pricey", "not_tried"],
      ]);
    });

    it("takes OpenRouter's object form { by, partition }", async () => {
      const res = await speak("route/sort-price", { sort: { by: "price", partition: "none" } });
      expect(servedBy(res)).to.equal("cheap");
    });

    it('"latency" picks the endpoint with the lower measured time to first byte', async () => {
      // Measure both: the catalog's first endpoint starts late (its fake waits before answering).
      expect(servedBy(await speak("route/latency", { only: ["lagging"] }))).to.equal("lagging");
      expect(servedBy(await speak("route/latency", { only: ["prompt"] }))).to.equal("prompt");
      expect(servedBy(await speak("route/latency"))).to.equal("lagging");
      const res = await speak("route/latency", { sort: "latency" });
      expect(servedBy(res)).to.equal("prompt");
      const explained = await w.admin.get(`/api/v1/keys/${w.key.hash}/explain?model=route/latency`);
      const [lagging, prompt] = explained.body.data.models[0].endpoints;
      expect(lagging.ttfb_ms).to.be.a("number");
      expect(prompt.ttfb_ms).to.be.a("number");
      expect(lagging.ttfb_ms).to.be.above(prompt.ttfb_ms);
    });

    it('"throughput" picks the endpoint with more measured bytes per second', async () => {
      expect(servedBy(await speak("route/throughput", { only: ["trickle"] }))).to.equal("trickle");
      expect(servedBy(await speak("route/throughput", { only: ["burst"] }))).to.equal("burst");
      const res = await speak("route/throughput", { sort: "throughput" });
      expect(servedBy(res)).to.equal("burst");
      const explained = await w.admin.get(
        `/api/v1/keys/${w.key.hash}/explain?model=route/throughput`,
      );
      const [trickle, burst] = explained.body.data.models[0].endpoints;
      expect(burst.throughput_bytes_per_second).to.be.above(trickle.throughput_bytes_per_second);
    });
  });

  describe("order, only, ignore", () => {
    it("order puts its providers first, in its order, before the rest", async () => {
      const res = await speak("route/order", { order: ["cheap", "mid"] });
      expect(servedBy(res)).to.equal("cheap");
      expect(outcomes(await w.record(res))).to.deep.equal([
        ["cheap", "served"],
        ["mid", "not_tried"],
        ["pricey", "not_tried"],
      ]);
    });

    it("order falls back to the next endpoint when its provider fails", async () => {
      w.fakes.cheap.behaviour = { kind: "status", status: 400 };
      const res = await speak("route/order", { order: ["cheap"] });
      expect(servedBy(res)).to.equal("pricey");
      const record = await w.record(res);
      expect(record.routing[0]).to.include({ provider: "cheap", outcome: "failed", status: 400 });
      expect(record.routing[1]).to.include({ provider: "pricey", outcome: "served" });
    });

    it("only restricts routing to its providers; the others are skipped, naming provider.only", async () => {
      const res = await speak("route/only-ignore", { only: ["mid"] });
      expect(servedBy(res)).to.equal("mid");
      const record = await w.record(res);
      expect(record.routing).to.deep.include({
        provider: "pricey",
        outcome: "skipped",
        reason: "not in provider.only",
        attempts: 0,
        status: null,
      });
    });

    it("ignore skips its providers", async () => {
      const res = await speak("route/only-ignore", { ignore: ["pricey", "mid"] });
      expect(servedBy(res)).to.equal("cheap");
      expect(outcomes(await w.record(res))).to.deep.include(["pricey", "skipped"]);
    });

    it("is 404 naming the provider preferences when only and ignore leave nothing", async () => {
      const res = await speak("route/only-ignore", { only: ["mid"], ignore: ["mid"] });
      expectError(res, 404, /provider preferences \(provider\.only, provider\.ignore/);
      const [refused] = await w.recordsOf("route/only-ignore", 1, "refused");
      expect(refused.status).to.equal("refused");
      expect(outcomes(refused)).to.deep.equal([
        ["pricey", "skipped"],
        ["mid", "skipped"],
        ["cheap", "skipped"],
      ]);
    });
  });

  describe("allow_fallbacks", () => {
    it("false: only the ordered provider is tried, and its error is the answer", async () => {
      w.fakes.steady.behaviour = { kind: "status", status: 400 };
      const res = await speak("route/no-fallbacks", { order: ["steady"], allow_fallbacks: false });
      expectError(res, 502, /Provider steady/);
      expect(w.fakes.flaky.requests).to.have.length(0);
      const [failed] = await w.recordsOf("route/no-fallbacks", 1, "failed");
      expect(failed.status).to.equal("failed");
      expect(failed.routing).to.deep.equal([
        {
          provider: "steady",
          outcome: "failed",
          reason: failed.routing[0].reason,
          attempts: 1,
          status: 400,
        },
        {
          provider: "flaky",
          outcome: "skipped",
          reason: "not in provider.order (provider.allow_fallbacks: false)",
          attempts: 0,
          status: null,
        },
      ]);
    });

    it("true (the default): the next endpoint serves when the ordered one fails", async () => {
      w.fakes.steady.behaviour = { kind: "status", status: 400 };
      const res = await speak("route/no-fallbacks", { order: ["steady"] });
      expect(servedBy(res)).to.equal("flaky");
    });

    it("false without order: only the first endpoint (of the sort) may serve", async () => {
      w.fakes.flaky.behaviour = { kind: "status", status: 400 };
      const res = await speak("route/no-fallbacks", { allow_fallbacks: false });
      expectError(res, 502, /Provider flaky/);
      expect(w.fakes.steady.requests).to.have.length(0);
    });
  });

  describe("max_price", () => {
    it("prompt (USD per million characters) skips endpoints priced over it", async () => {
      const res = await speak("route/max-price", { max_price: { prompt: 10 } });
      expect(servedBy(res)).to.equal("mid");
      const record = await w.record(res);
      expect(record.routing[2]).to.deep.equal({
        provider: "pricey",
        outcome: "skipped",
        reason: "price $30 per million characters is over provider.max_price.prompt $10",
        attempts: 0,
        status: null,
      });
    });

    it("takes prices as decimal strings, as OpenRouter's SDK sends them", async () => {
      const res = await speak("route/max-price", { max_price: { prompt: "5" } });
      expect(servedBy(res)).to.equal("cheap");
    });

    it("request bounds the whole request's cost", async () => {
      // 13 characters: $0.00039 at 30, $0.00013 at 10, $0.000065 at 5.
      const res = await speak("route/max-price", { max_price: { request: 0.0001 } });
      expect(servedBy(res)).to.equal("cheap");
      const record = await w.record(res);
      // biome-ignore lint/suspicious/noExplicitAny: generation JSON
      const pricey = record.routing.find((s: any) => s.provider === "pricey");
      expect(pricey.reason).to.match(/would cost \$0\.00039, over provider\.max_price\.request/);
    });

    it("is 404 when every endpoint is over it", async () => {
      const res = await speak("route/max-price", { max_price: { prompt: 1 } });
      expectError(res, 404, /provider\.max_price/);
    });
  });

  describe("bad values are 400 naming the field and the rule", () => {
    for (const [provider, message] of [
      [{ sort: "fastest" }, /provider\.sort must be "price", "latency" or "throughput"/],
      [{ sort: { by: "cost" } }, /provider\.sort must be/],
      [{ sort: { by: "price", partition: "all" } }, /provider\.sort\.partition/],
      [{ sort: { by: "price", extra: 1 } }, /Unknown field "provider\.sort\.extra"/],
      [{ order: "cheap" }, /provider\.order must be an array/],
      [{ order: [1] }, /provider\.order\[0\] must be a string/],
      [{ only: [""] }, /provider\.only\[0\] must be a provider id of 1 to 200 characters/],
      [{ ignore: ["x".repeat(201)] }, /provider\.ignore\[0\] must be a provider id/],
      [
        { only: Array.from({ length: 101 }, (_, i) => `p${i}`) },
        /provider\.only may hold at most 100/,
      ],
      [{ allow_fallbacks: "no" }, /provider\.allow_fallbacks must be true or false/],
      [{ max_price: { prompt: -1 } }, /provider\.max_price\.prompt must be a number of USD >= 0/],
      [{ max_price: { prompt: "cheap" } }, /provider\.max_price\.prompt must be a number/],
      [{ max_price: { tokens: 1 } }, /Unknown field "provider\.max_price\.tokens"/],
      [{ max_price: 5 }, /provider\.max_price must be an object/],
      [{ require_parameters: true }, /Unknown field "provider\.require_parameters"/],
    ] as const) {
      it(JSON.stringify(provider), async () => {
        const res = await speak("route/order", provider as Record<string, unknown>);
        expectError(res, 400, message);
      });
    }
  });

  describe("explain", () => {
    it("shows a generation's routing (?generation_id=) and each endpoint's breaker", async () => {
      w.fakes.flaky.behaviour = { kind: "status", status: 500 };
      const res = await speak("route/explain");
      expect(servedBy(res)).to.equal("steady");
      const id = res.headers.get("x-generation-id") ?? "";
      await w.recordById(id);
      const explained = await w.admin.get(
        `/api/v1/keys/${w.key.hash}/explain?model=route/explain&generation_id=${id.toUpperCase().replace(/^GEN-/, "gen-")}`,
      );
      expect(explained.status, JSON.stringify(explained.body)).to.equal(200);
      const data = explained.body.data;
      expect(data.generation_id).to.equal(id);
      expect(data.routing).to.deep.equal([
        {
          provider: "flaky",
          outcome: "failed",
          reason: "Provider flaky returned an error (HTTP 500)",
          // Retried after the others were tried: steady served first.
          attempts: 1,
          status: 500,
        },
        { provider: "steady", outcome: "served", reason: null, attempts: 1, status: null },
      ]);
      const [flaky, steady] = data.models[0].endpoints;
      expect(flaky).to.include({ provider: "flaky", breaker: "closed", consecutive_failures: 1 });
      expect(steady).to.include({ provider: "steady", breaker: "closed", consecutive_failures: 0 });
    });

    it("is 404 for a generation id that is not the key's", async () => {
      const res = await w.admin.get(
        `/api/v1/keys/${w.key.hash}/explain?generation_id=gen-00000000-0000-4000-8000-000000000000`,
      );
      expectError(res, 404, /generation/);
    });
  });
});
