import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { MemoryStore } from "../../store/memory-store.js";
import { metadata, statusOf, unary } from "../kit/grpc-plain.js";
import { usePlainGuardrailServer } from "../kit/plain-guardrail-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * Versions live in the database: a guardrail process started without one says so (400 over
 * HTTP) instead of answering an empty history, while checks, which need no database, still run
 * and refuse a change that fails them. gRPC callers get the request rules HTTP callers get.
 */
describe("gRPC: guardrail versions and checks in a process without a database", () => {
  const h = usePlainGuardrailServer(async () => new MemoryStore());
  const call = (method: string, req: unknown) =>
    unary(h.guardrails, method, req, metadata({ key: MANAGEMENT_KEY }));

  it("answers FAILED_PRECONDITION for versions, and runs and enforces the checks", async () => {
    const { guardrail } = (await call("CreateGuardrail", {
      guardrail: {
        name: "no database",
        allowed_models: { values: ["railgate/espeak-ng"] },
        checks: {
          values: [
            {
              name: "the engine is allowed",
              request: { model: "railgate/espeak-ng" },
              expect: "CHECK_OUTCOME_ALLOWED",
            },
          ],
        },
      },
    })) as { guardrail: { id: string; last_check_run: { passed: boolean } } };
    expect(guardrail.last_check_run.passed).to.equal(true);
    for (const [method, req] of [
      ["ListGuardrailVersions", { guardrail_id: guardrail.id }],
      ["GetGuardrailVersion", { guardrail_id: guardrail.id, version: 1 }],
      ["RestoreGuardrailVersion", { guardrail_id: guardrail.id, version: 1 }],
    ] as const) {
      const status = await statusOf(call(method, req));
      expect(status.code, method).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(status.details, method).to.match(/guardrail versions are kept in the database/);
    }
    const refused = await statusOf(
      call("UpdateGuardrail", {
        id: guardrail.id,
        guardrail: { allowed_models: { values: ["openai/tts-1"] } },
        update_mask: { paths: ["allowed_models"] },
      }),
    );
    expect(refused.code).to.equal(grpc.status.ABORTED);
    // (grpc-js leaves Connect's percent-encoded ":" and "," as they are: match the words.)
    expect(decodeURIComponent(refused.details)).to.match(
      /the engine is allowed: expected allowed, got refused/,
    );
    const run = (await call("RunGuardrailChecks", { guardrail_id: guardrail.id })) as {
      run: { passed: boolean };
    };
    expect(run.run.passed).to.equal(true);
  });

  it("refuses a bad id or version number, naming the field", async () => {
    for (const [method, req, message] of [
      ["ListGuardrailVersions", { guardrail_id: "x" }, /guardrail_id must be a lowercase UUID/],
      [
        "GetGuardrailVersion",
        { guardrail_id: "00000000-0000-4000-8000-000000000000", version: 0 },
        /version must be a whole number from 1/,
      ],
      [
        "RestoreGuardrailVersion",
        { guardrail_id: "00000000-0000-4000-8000-000000000000", version: -2 },
        /version must be a whole number from 1/,
      ],
      ["RunGuardrailChecks", { guardrail_id: "" }, /guardrail_id must be a lowercase UUID/],
    ] as const) {
      const status = await statusOf(call(method, req));
      expect(status.code, method).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(status.details, method).to.match(message);
    }
  });
});
