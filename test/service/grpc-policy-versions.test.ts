import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { MemoryStore } from "../../store/memory-store.js";
import { metadata, plainClient, statusOf, unary } from "../kit/grpc-plain.js";
import { usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * A model availability config as a google.protobuf.Struct, as a plain gRPC client sends it
 * (the well-known types keep protobufjs's camelCase field names).
 */
function modelsConfig(model: string) {
  const values = [{ stringValue: model }];
  return { fields: { allowed_models: { listValue: { values } } } };
}

/**
 * GuardrailPolicyService's versions and checks over plain gRPC, in a process without a
 * database: versions say where they live (FAILED_PRECONDITION) instead of answering an empty
 * history, while checks, which need no database, still run and refuse a change that fails them.
 */
describe("gRPC: guardrail policy versions and checks in a process without a database", () => {
  const h = usePlainGuardrailServer(async () => new MemoryStore());
  let policies: ReturnType<typeof plainClient>;
  before(async () => {
    // The server's port, read from the guardrail client the harness made.
    const target = h.guardrails.getChannel().getTarget();
    policies = plainClient("policies", Number(target.split(":").at(-1)));
  });
  after(() => policies?.close());
  const call = (method: string, req: unknown) =>
    unary(policies, method, req, metadata({ key: MANAGEMENT_KEY }));

  it("answers FAILED_PRECONDITION for versions, and runs and enforces the checks", async () => {
    const input = {
      policy_type: "model_availability",
      name: "no database",
      config: modelsConfig("railgate/espeak-ng"),
      checks: {
        values: [
          {
            name: "the engine is allowed",
            request: { model: "railgate/espeak-ng" },
            expect: "CHECK_OUTCOME_ALLOWED",
          },
        ],
      },
    };
    const { policy } = (await call("CreateGuardrailPolicy", { policy: input })) as {
      policy: { id: string; last_check_run: { passed: boolean } };
    };
    expect(policy.last_check_run.passed).to.equal(true);
    const ids = { policy_type: "model_availability", policy_id: policy.id };
    for (const [method, req] of [
      ["ListGuardrailPolicyVersions", ids],
      ["GetGuardrailPolicyVersion", { ...ids, version: 1 }],
      ["RestoreGuardrailPolicyVersion", { ...ids, version: 1 }],
    ] as const) {
      const status = await statusOf(call(method, req));
      expect(status.code, method).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(status.details, method).to.match(/policy versions are kept in the database/);
    }
    const change = { ...input, config: modelsConfig("openai/tts-1") };
    const refused = await statusOf(
      call("UpdateGuardrailPolicy", { id: policy.id, policy: change }),
    );
    expect(refused.code).to.equal(grpc.status.ABORTED);
    expect(decodeURIComponent(refused.details)).to.match(
      /the engine is allowed: expected allowed, got refused/,
    );
    const forced = (await call("UpdateGuardrailPolicy", {
      id: policy.id,
      policy: change,
      force: true,
    })) as { policy: { last_check_run: { forced: boolean } } };
    expect(forced.policy.last_check_run.forced).to.equal(true);
    const run = (await call("RunGuardrailPolicyChecks", ids)) as { run: { passed: boolean } };
    expect(run.run.passed).to.equal(false);
  });

  it("answers FAILED_PRECONDITION for a workspace-wide policy's versions, and enforces its checks", async () => {
    const input = {
      policy_type: "model_availability",
      name: "account, no database",
      config: modelsConfig("railgate/espeak-ng"),
      is_default: true,
      checks: {
        values: [
          {
            name: "the engine is allowed",
            request: { model: "railgate/espeak-ng" },
            expect: "CHECK_OUTCOME_ALLOWED",
          },
        ],
      },
    };
    const { policy } = (await call("CreateAccountPolicy", { policy: input })) as {
      policy: { id: string; last_check_run: { passed: boolean } };
    };
    expect(policy.last_check_run.passed).to.equal(true);
    for (const [method, req] of [
      ["ListAccountPolicyVersions", { policy_id: policy.id }],
      ["GetAccountPolicyVersion", { policy_id: policy.id, version: 1 }],
      ["RestoreAccountPolicyVersion", { policy_id: policy.id, version: 1 }],
    ] as const) {
      const status = await statusOf(call(method, req));
      expect(status.code, method).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(status.details, method).to.match(/policy versions are kept in the database/);
    }
    const change = { ...input, config: modelsConfig("openai/tts-1") };
    const refused = await statusOf(call("UpdateAccountPolicy", { id: policy.id, policy: change }));
    expect(refused.code).to.equal(grpc.status.ABORTED);
    const forced = (await call("UpdateAccountPolicy", {
      id: policy.id,
      policy: change,
      force: true,
    })) as { policy: { last_check_run: { forced: boolean } } };
    expect(forced.policy.last_check_run.forced).to.equal(true);
    const run = (await call("RunAccountPolicyChecks", { policy_id: policy.id })) as {
      run: { passed: boolean };
    };
    expect(run.run.passed).to.equal(false);
    const unauthenticated = await statusOf(
      unary(policies, "RunAccountPolicyChecks", { policy_id: policy.id }, metadata({})),
    );
    expect(unauthenticated.code).to.equal(grpc.status.UNAUTHENTICATED);
  });

  it("authenticates a workspace-wide policy's what-if, checks its change, and says the replay needs the database", async () => {
    const { policy } = (await call("CreateAccountPolicy", {
      policy: {
        policy_type: "model_availability",
        name: "account what-if",
        config: modelsConfig("railgate/espeak-ng"),
      },
    })) as { policy: { id: string } };
    const req = {
      id: policy.id,
      change: { name: "what if", config: modelsConfig("openai/tts-1") },
    };
    const anonymous = await statusOf(unary(policies, "SimulateAccountPolicy", req, metadata({})));
    expect(anonymous.code).to.equal(grpc.status.UNAUTHENTICATED);
    const missing = await statusOf(
      call("SimulateAccountPolicy", { ...req, id: "00000000-0000-4000-8000-000000000000" }),
    );
    expect(missing.code).to.equal(grpc.status.NOT_FOUND);
    const bad = await statusOf(
      call("SimulateAccountPolicy", { ...req, change: { ...req.change, name: "" } }),
    );
    expect(bad.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(bad.details).to.match(/^name /);
    const noChange = await statusOf(call("SimulateAccountPolicy", { id: policy.id }));
    expect(noChange.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(noChange.details).to.match(/^change is required/);
    const replay = await statusOf(call("SimulateAccountPolicy", req));
    expect(replay.code).to.equal(grpc.status.UNAVAILABLE);
    expect(replay.details).to.match(/without the request-log database/);
  });

  it("refuses a bad type, version number or budget checks, naming the rule", async () => {
    for (const [method, req, code, message] of [
      [
        "ListGuardrailPolicyVersions",
        { policy_type: "rate_limit", policy_id: "x" },
        grpc.status.INVALID_ARGUMENT,
        /policy_type must be one of/,
      ],
      [
        "GetGuardrailPolicyVersion",
        { policy_type: "budget", policy_id: "00000000-0000-4000-8000-000000000000", version: 0 },
        grpc.status.INVALID_ARGUMENT,
        /version must be a whole number from 1/,
      ],
      [
        "RunGuardrailPolicyChecks",
        { policy_type: "budget", policy_id: "00000000-0000-4000-8000-000000000000" },
        grpc.status.FAILED_PRECONDITION,
        /checks are not available on budget policies/,
      ],
    ] as const) {
      const status = await statusOf(call(method, req));
      expect(status.code, method).to.equal(code);
      expect(status.details, method).to.match(message);
    }
  });
});
