import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { metadata, type PlainClient, plainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/**
 * A budget policy's config as a google.protobuf.Struct, in proto-loader's shape (protobufjs
 * ships the well-known types with camelCase field names, whatever keepCase says).
 */
const budget = (limit: number) => ({
  fields: {
    limit_usd: { numberValue: limit },
    reset_interval: { stringValue: "daily" },
  },
});

/**
 * A policy's what-if and shadow RPCs over plain gRPC, as any process reaching the port would
 * call them: authenticated like every RPC (a management key), with the HTTP API's errors.
 */
describe("gRPC: a guardrail policy's what-if and shadow (plain @grpc/grpc-js)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let policies: PlainClient;
  let accounts: PlainClient;
  let policyId: string;
  let standardKey: string;
  const admin = () => metadata({ key: MANAGEMENT_KEY });
  const ref = () => ({ policy_type: "budget", id: policyId });
  const change = (name: string) => ({ policy_type: "budget", name, config: budget(2) });
  const inAnHour = () => ({ seconds: String(Math.floor(Date.now() / 1000) + 3600), nanos: 0 });

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url, { embeddedEngine: "off" });
    policies = plainClient("policies", system.guardrailGrpcPort);
    accounts = plainClient("account", system.guardrailGrpcPort);
    const key = (await unary(
      accounts,
      "CreateKey",
      { name: "plain standard", kind: "KEY_KIND_STANDARD" },
      admin(),
    )) as { secret: string };
    standardKey = key.secret;
    const created = (await unary(
      policies,
      "CreateGuardrailPolicy",
      { policy: { policy_type: "budget", name: "grpc budget", config: budget(1) } },
      admin(),
    )) as { policy: { id: string } };
    policyId = created.policy.id;
  });

  after(async () => {
    for (const c of [policies, accounts]) c?.close();
    await system?.close();
    await redis?.stop();
  });

  it("refuses each RPC without a credential and with a standard key", async () => {
    const calls: [string, Record<string, unknown>][] = [
      ["SimulateGuardrailPolicy", { ...ref(), change: change("x") }],
      ["StartGuardrailPolicyShadow", { ...ref(), change: change("x"), expires_at: inAnHour() }],
      ["GetGuardrailPolicyShadow", ref()],
      ["PromoteGuardrailPolicyShadow", ref()],
      ["EndGuardrailPolicyShadow", ref()],
    ];
    for (const [method, req] of calls) {
      const anonymous = await statusOf(unary(policies, method, req, metadata()));
      expect(anonymous.code, method).to.equal(grpc.status.UNAUTHENTICATED);
      const standard = await statusOf(unary(policies, method, req, metadata({ key: standardKey })));
      expect(standard.code, method).to.equal(grpc.status.PERMISSION_DENIED);
    }
  });

  it("starts, reports, refuses a second and ends a shadow; simulates without writing", async () => {
    const started = (await unary(
      policies,
      "StartGuardrailPolicyShadow",
      { ...ref(), change: change("shadowed"), expires_at: inAnHour() },
      admin(),
    )) as { shadow: { change: { name: string } } };
    expect(started.shadow.change.name).to.equal("shadowed");
    const second = await statusOf(
      unary(
        policies,
        "StartGuardrailPolicyShadow",
        { ...ref(), change: change("again"), expires_at: inAnHour() },
        admin(),
      ),
    );
    expect(second.code).to.equal(grpc.status.ABORTED);
    expect(second.details).to.match(/already runs a shadow/);
    const report = (await unary(policies, "GetGuardrailPolicyShadow", ref(), admin())) as {
      expired: boolean;
      outcomes_changed: string;
    };
    expect(report).to.include({ expired: false, outcomes_changed: "0" });
    const simulated = (await unary(
      policies,
      "SimulateGuardrailPolicy",
      { ...ref(), change: change("what if") },
      admin(),
    )) as { simulation: { requests_replayed: string } };
    expect(simulated.simulation.requests_replayed).to.equal("0");
    const bad = await statusOf(
      unary(
        policies,
        "SimulateGuardrailPolicy",
        { ...ref(), change: { name: "x", config: budget(-1) } },
        admin(),
      ),
    );
    expect(bad.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).to.match(/config\.limit_usd/);
    const ended = (await unary(policies, "EndGuardrailPolicyShadow", ref(), admin())) as {
      ended: boolean;
    };
    expect(ended.ended).to.equal(true);
    const gone = await statusOf(unary(policies, "GetGuardrailPolicyShadow", ref(), admin()));
    expect(gone.code).to.equal(grpc.status.NOT_FOUND);
    const got = (await unary(policies, "GetGuardrailPolicy", ref(), admin())) as {
      policy: { name: string };
    };
    expect(got.policy.name).to.equal("grpc budget");
  });

  it("runs a workspace-wide policy's shadow: refused without a management key, started, reported, promoted", async () => {
    const created = (await unary(
      policies,
      "CreateAccountPolicy",
      { policy: { policy_type: "budget", name: "grpc account cap", config: budget(1) } },
      admin(),
    )) as { policy: { id: string } };
    const id = created.policy.id;
    const start = {
      id,
      change: { name: "grpc account tighter", config: budget(0.5) },
      expires_at: inAnHour(),
    };
    for (const [method, req] of [
      ["StartAccountPolicyShadow", start],
      ["GetAccountPolicyShadow", { id }],
      ["PromoteAccountPolicyShadow", { id }],
      ["EndAccountPolicyShadow", { id }],
    ] as const) {
      const anonymous = await statusOf(unary(policies, method, req, metadata()));
      expect(anonymous.code, method).to.equal(grpc.status.UNAUTHENTICATED);
      const standard = await statusOf(unary(policies, method, req, metadata({ key: standardKey })));
      expect(standard.code, method).to.equal(grpc.status.PERMISSION_DENIED);
    }
    const started = (await unary(policies, "StartAccountPolicyShadow", start, admin())) as {
      shadow: { change: { name: string } };
    };
    expect(started.shadow.change.name).to.equal("grpc account tighter");
    const report = (await unary(policies, "GetAccountPolicyShadow", { id }, admin())) as {
      expired: boolean;
      outcomes_changed: string;
      workspace_ids: string[];
    };
    expect(report).to.deep.include({ expired: false, outcomes_changed: "0", workspace_ids: [] });
    const promoted = (await unary(policies, "PromoteAccountPolicyShadow", { id }, admin())) as {
      policy: { name: string; shadow: unknown };
    };
    expect(promoted.policy.name).to.equal("grpc account tighter");
    expect(promoted.policy.shadow).to.equal(null);
    const gone = await statusOf(unary(policies, "GetAccountPolicyShadow", { id }, admin()));
    expect(gone.code).to.equal(grpc.status.NOT_FOUND);
    expect(gone.details).to.match(/account policy .* runs no shadow/);
  });
});
