import { expect } from "chai";
import { accessLogger } from "../../gateway/access-log.js";
import { setLogDestination } from "../../platform/observability/logger.js";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { sample } from "../kit/promql.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** Whether one series of that name and labels is exposed at all. */
function exposed(text: string, name: string, labels: Record<string, string>): boolean {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split("\n")
    .some((line) => line.startsWith(`${name}{`) && pairs.every((p) => line.includes(p)));
}

describe("operations: /metrics, request ids and access logs", () => {
  const w = useWorld();
  const metrics = async () => {
    const res = await fetch(`${w.gw.url()}/metrics`, {
      headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it("/metrics: 401 without a key, 403 with a standard key, 200 with the management key", async () => {
    expectError(await new Api(w.gw.url()).get("/metrics"), 401, /^Missing API key/);
    const key = await w.gw.key(await w.gw.workspace());
    expectError(
      await new Api(w.gw.url(), key.secret).get("/metrics"),
      403,
      /^This operation requires a management key$/,
    );
    expect(await metrics()).to.include("# TYPE railgate_http_requests_total counter");
  });

  it("counts requests by route pattern, status and region, and speech latency by provider", async () => {
    const ws = await w.gw.workspace();
    const before = await metrics();
    const route = {
      route: "/api/v1/workspaces/:id",
      method: "GET",
      status: "200",
      region: "europe",
    };
    const res = await new Api(w.gw.url("europe"), MANAGEMENT_KEY).get(
      `/api/v1/workspaces/${ws.id}`,
    );
    expect(res.status).to.equal(200);
    const key = await w.gw.key(ws);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "Count me." }), "fast");
    const speech = {
      route: "/api/v1/audio/speech",
      method: "POST",
      status: "200",
      region: "global",
    };
    // The counters move when each response closes, a moment after the client has it.
    const after = await pollUntil(
      metrics,
      (t) =>
        sample(t, "railgate_speech_duration_seconds_count", {
          provider: "fast",
          status: "completed",
        }) >
        sample(before, "railgate_speech_duration_seconds_count", {
          provider: "fast",
          status: "completed",
        }),
    );
    expect(sample(after, "railgate_http_requests_total", route)).to.equal(
      sample(before, "railgate_http_requests_total", route) + 1,
    );
    expect(sample(after, "railgate_http_requests_total", speech)).to.equal(
      sample(before, "railgate_http_requests_total", speech) + 1,
    );
    const ttfb = "railgate_speech_time_to_first_byte_seconds_count";
    expect(sample(after, ttfb, { provider: "fast" })).to.equal(
      sample(before, ttfb, { provider: "fast" }) + 1,
    );
    const grpc = { service: "railgate.speech.v1.SpeechService", method: "Synthesize", code: "OK" };
    expect(sample(after, "railgate_grpc_server_calls_total", grpc)).to.be.greaterThan(
      sample(before, "railgate_grpc_server_calls_total", grpc),
    );
    expect(after).to.include("railgate_engine_queue_depth ");
    // Never the raw path: ids stay out of the label values.
    expect(after).to.not.include(ws.id);
  });

  it("counts content filter actions by slug/action and refusals by reason", async () => {
    const { key } = await w.gw.governedKey({
      content_filter_builtins: [{ slug: "email", action: "block" }],
    });
    const before = await metrics();
    const res = await w.gw.speak(key, { model: MODELS.fast, input: "Mail jane@example.com now." });
    expectError(res, 403, /^Request blocked by content filter: Email address$/);
    const after = await metrics();
    const block = { slug: "email", action: "block" };
    expect(sample(after, "railgate_guardrail_filter_actions_total", block)).to.equal(
      sample(before, "railgate_guardrail_filter_actions_total", block) + 1,
    );
    const refused = { reason: "filter-block" };
    expect(sample(after, "railgate_admission_refusals_total", refused)).to.equal(
      sample(before, "railgate_admission_refusals_total", refused) + 1,
    );
  });

  it("counts an endpoint that fails before its first byte as an upstream error of its provider", async () => {
    const key = await w.gw.key(await w.gw.workspace());
    const before = await metrics();
    // Reset before each test (useWorld).
    w.fakes.fast.behaviour = { kind: "status", status: 500 };
    const res = await w.gw.speak(key, { model: MODELS.fast, input: "This one fails." });
    expect(res.status).to.equal(502);
    const after = await metrics();
    expect(sample(after, "railgate_upstream_errors_total", { provider: "fast" })).to.equal(
      sample(before, "railgate_upstream_errors_total", { provider: "fast" }) + 1,
    );
  });

  it("reports each guardrail's spend, limit and remaining budget from the store, per key and member", async () => {
    // 12 characters at $10 per million: $0.00012 a request (budgets-per-entity.test.ts).
    const text = "Budget test.";
    const ws = await w.gw.workspace();
    const [a, b, open] = [await w.gw.key(ws), await w.gw.key(ws), await w.gw.key(ws)];
    const audrey = await w.gw.key(ws, { member_user_id: "audrey" });
    const g = await w.gw.guardrail(ws, { limit_usd: 0.0003, reset_interval: "daily" });
    await w.gw.assignKeys(g, a, b);
    const unlimited = await w.gw.guardrail(ws, { allowed_providers: ["fast"] });
    await w.gw.assignKeys(unlimited, open);
    const of = (id: string) => ({ workspace_id: ws.id, guardrail_id: id });
    const spend = (t: string, id: string, entity = "key") =>
      sample(t, "railgate_guardrail_spend_usd", { ...of(id), entity });
    const remaining = (t: string, id: string) =>
      sample(t, "railgate_guardrail_budget_remaining_usd", of(id));
    const speak = async (key: typeof a) =>
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: text }), "fast");

    let t = await metrics();
    expect(spend(t, g)).to.equal(0);
    expect(sample(t, "railgate_guardrail_limit_usd", of(g))).to.equal(0.0003);
    expect(remaining(t, g)).to.equal(0.0003);

    await speak(a);
    t = await metrics();
    expect(spend(t, g)).to.be.closeTo(0.00012, 1e-12);
    expect(remaining(t, g)).to.be.closeTo(0.00018, 1e-12);
    expect(sample(t, "railgate_guardrail_spending_entities", of(g))).to.equal(1);

    // Each key has its own limit: the remaining budget is the most-spent key's (a's).
    await speak(a);
    await speak(b);
    t = await metrics();
    expect(spend(t, g)).to.be.closeTo(0.00036, 1e-12);
    expect(spend(t, g, "member")).to.equal(0);
    expect(remaining(t, g)).to.be.closeTo(0.00006, 1e-12);
    expect(sample(t, "railgate_guardrail_spending_entities", of(g))).to.equal(2);

    // Without a limit nothing is charged against a guardrail: spend, but no limit or remaining.
    await speak(open);
    t = await metrics();
    expect(exposed(t, "railgate_guardrail_spend_usd", of(unlimited))).to.equal(true);
    expect(spend(t, unlimited)).to.equal(0);
    expect(exposed(t, "railgate_guardrail_limit_usd", of(unlimited))).to.equal(false);
    expect(exposed(t, "railgate_guardrail_budget_remaining_usd", of(unlimited))).to.equal(false);

    // The workspace default counts each key and, apart, each key's member.
    await w.gw.setDefault(ws, { limit_usd: 0.001, reset_interval: "monthly" });
    await speak(audrey);
    t = await metrics();
    const def = ws.defaultGuardrailId;
    expect(spend(t, def)).to.be.closeTo(0.00012, 1e-12);
    expect(spend(t, def, "member")).to.be.closeTo(0.00012, 1e-12);
    expect(remaining(t, def)).to.be.closeTo(0.00088, 1e-12);

    const deleted = await new Api(w.gw.url(), MANAGEMENT_KEY).delete(`/api/v1/guardrails/${g}`);
    expect(deleted.status).to.equal(200);
    t = await metrics();
    expect(t).to.not.include(g);
    expect(spend(t, def)).to.be.closeTo(0.00012, 1e-12);
  });

  it("echoes a valid X-Request-Id, mints one otherwise, on successes and errors alike", async () => {
    const anon = new Api(w.gw.url());
    const given = "client-req_42.a";
    const kept = await anon.request("GET", "/metrics", undefined, {
      headers: { "x-request-id": given },
    });
    expect(kept.status).to.equal(401);
    expect(kept.headers.get("x-request-id")).to.equal(given);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const minted = await anon.get("/no/such/route");
    expect(minted.status).to.equal(404);
    expect(minted.headers.get("x-request-id")).to.match(uuid);
    for (const bad of ["x".repeat(129), "has space", "semi;colon", 'quote"d']) {
      const res = await anon.request("GET", "/healthz", undefined, {
        headers: { "x-request-id": bad },
      });
      expect(res.headers.get("x-request-id"), bad).to.match(uuid);
    }
    const longest = "a".repeat(128);
    const ok = await anon.request("GET", "/healthz", undefined, {
      headers: { "x-request-id": longest },
    });
    expect(ok.headers.get("x-request-id")).to.equal(longest);
  });

  it("writes one access-log line per request, without the query or the key", async () => {
    const lines: string[] = [];
    const restore = setLogDestination({ write: (line: string) => void lines.push(line) });
    const level = accessLogger.level;
    accessLogger.level = "info";
    try {
      const ws = await w.gw.workspace();
      const key = await w.gw.key(ws);
      const id = `access-${Date.now()}`;
      const res = await new Api(w.gw.url("us"), key.secret).request(
        "GET",
        "/api/v1/generation?id=gen-secret-query",
        undefined,
        { headers: { "x-request-id": id } },
      );
      expect(res.status).to.equal(404);
      const mine = () =>
        lines
          .map((l) => JSON.parse(l))
          .filter((l) => l.component === "access" && l.requestId === id);
      const found = await pollUntil(
        async () => mine(),
        (m) => m.length > 0,
      );
      expect(found).to.have.length(1);
      const line = found[0];
      expect(line).to.include({
        msg: "request",
        method: "GET",
        route: "/api/v1/generation",
        path: "/api/v1/generation",
        status: 404,
        region: "us",
        key: key.hash.slice(0, 8),
        completed: true,
      });
      expect(line.durationMs).to.be.a("number").and.at.least(0);
      expect(line.bytesOut).to.be.greaterThan(0);
      const text = JSON.stringify(line);
      expect(text).to.not.include("gen-secret-query");
      expect(text).to.not.include(key.secret);
      expect(text).to.not.include(key.hash);
    } finally {
      accessLogger.level = level;
      restore();
    }
  });
});
