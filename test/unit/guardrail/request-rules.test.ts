import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  FilterAction,
  GuardrailInputSchema,
  ResetInterval,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  CreateGuardrailRequestSchema,
  GuardrailService,
  UpdateGuardrailRequestSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { GUARDRAIL_REQUEST_RULES } from "../../../services/guardrail/request-rules.js";
import { expectInvalidArgument } from "../../kit/expect.js";

const ID = "0b6e1c1e-8f4e-4f7e-9a54-1c2d3e4f5a6b";

const update = (paths: string[], guardrail: Parameters<typeof create>[1] = {}) =>
  create(UpdateGuardrailRequestSchema, {
    id: ID,
    guardrail: create(GuardrailInputSchema, guardrail as never),
    updateMask: { paths },
  });

describe("guardrail request rules", () => {
  it("has a rule for every RPC of the service", () => {
    expect(Object.keys(GUARDRAIL_REQUEST_RULES).sort()).to.deep.equal(
      Object.keys(GuardrailService.method).sort(),
    );
  });

  it("refuses an update with an empty mask", () => {
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.updateGuardrail(update([])),
      /update_mask must name/,
    );
    expectInvalidArgument(
      () =>
        GUARDRAIL_REQUEST_RULES.updateGuardrail(
          create(UpdateGuardrailRequestSchema, { id: ID, guardrail: { name: "x" } }),
        ),
      /update_mask must name at least 1 field/,
    );
  });

  it("refuses fields set outside the mask, naming them", () => {
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.updateGuardrail(update(["description"], { name: "x" })),
      /guardrail\.name is set but update_mask does not name it/,
    );
    expectInvalidArgument(
      () =>
        GUARDRAIL_REQUEST_RULES.updateGuardrail(
          update(["name"], { name: "x", resetInterval: ResetInterval.DAILY }),
        ),
      /guardrail\.reset_interval is set/,
    );
    GUARDRAIL_REQUEST_RULES.updateGuardrail(update(["name", "allowed_models"], { name: "x" }));
  });

  it("refuses unknown and read-only paths and a null name", () => {
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.updateGuardrail(update(["bogus"])),
      /"bogus" is not/,
    );
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.updateGuardrail(update(["workspace_id"])),
      /workspace_id cannot be changed/,
    );
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.updateGuardrail(update(["name"])),
      /name cannot be null/,
    );
  });

  it("checks a new guardrail under every stored rule, enum values included", () => {
    const createReq = (guardrail: object) =>
      create(CreateGuardrailRequestSchema, { guardrail: guardrail as never });
    expectInvalidArgument(
      () =>
        GUARDRAIL_REQUEST_RULES.createGuardrail(
          createReq({
            name: "x",
            contentFilterBuiltins: {
              values: [
                { slug: "regex-prompt-injection", action: FilterAction.BLOCK, scanScope: 7 },
              ],
            },
          }),
        ),
      /content_filter_builtins\[0\]\.scan_scope must be one of/,
    );
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.createGuardrail(createReq({})),
      /name is required/,
    );
    expectInvalidArgument(
      () => GUARDRAIL_REQUEST_RULES.createGuardrail(createReq({ name: "x", workspaceId: "W" })),
      /workspace_id must be a lowercase UUID/,
    );
    // Empty filter lists mean "none".
    GUARDRAIL_REQUEST_RULES.createGuardrail(
      createReq({
        name: "x",
        contentFilters: { values: [] },
        contentFilterBuiltins: { values: [] },
      }),
    );
  });
});
