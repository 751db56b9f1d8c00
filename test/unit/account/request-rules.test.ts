import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { expect } from "chai";
import {
  ApiKeySchema,
  KeyKind,
  KeyLimitReset,
  ReplayData,
  WorkspaceSchema,
} from "../../../gen/railgate/account/v1/account_pb.js";
import {
  AccountService,
  CreateKeyRequestSchema,
  UpdateKeyRequestSchema,
  UpdateWorkspaceRequestSchema,
} from "../../../gen/railgate/account/v1/account_service_pb.js";
import { withRequestRules } from "../../../platform/rpc/request-rules.js";
import { copyMaskedFields } from "../../../platform/rpc/update-mask.js";
import { ACCOUNT_REQUEST_RULES } from "../../../services/account/request-rules.js";
import { expectInvalidArgument } from "../../kit/expect.js";

const HASH = "a".repeat(64);
const ID = "0b6e1c1e-8f4e-4f7e-9a54-1c2d3e4f5a6b";

const updateKey = (paths: string[], values: object = {}) =>
  create(UpdateKeyRequestSchema, { hash: HASH, ...values, updateMask: { paths } });
const updateWorkspace = (paths: string[], values: object = {}) =>
  create(UpdateWorkspaceRequestSchema, { id: ID, ...values, updateMask: { paths } });

describe("account request rules", () => {
  it("has a rule for every RPC of the service", () => {
    expect(Object.keys(ACCOUNT_REQUEST_RULES).sort()).to.deep.equal(
      Object.keys(AccountService.method).sort(),
    );
  });

  it("walks a key update's mask: empty, unknown paths, values outside it, each value's rule", () => {
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey([], { disabled: true })),
      "Update is empty: send at least one of name, disabled, limit, rate_limit_per_minute, limit_reset, expires_at, include_byok_in_limit (update_mask must name at least 1 field)",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["colour"])),
      '"colour" is not an updatable key field',
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["name"], { name: "n", disabled: true })),
      'disabled is set but update_mask does not name it: add "disabled" to update_mask, or leave the field unset',
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["name"])),
      "name cannot be null",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["disabled"])),
      "disabled must be true or false",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["limit"], { limit: -1 })),
      "limit must be a number >= 0 (USD) or null",
    );
    expectInvalidArgument(
      () =>
        ACCOUNT_REQUEST_RULES.updateKey(
          updateKey(["rate_limit_per_minute"], { rateLimitPerMinute: 0 }),
        ),
      "rate_limit_per_minute must be an integer from 1 to 1000000 or null",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["limit_reset"], { limitReset: 9 })),
      'limit_reset must be "daily", "weekly", "monthly" or null',
    );
    expectInvalidArgument(
      () =>
        ACCOUNT_REQUEST_RULES.updateKey(
          updateKey(["expires_at"], { expiresAt: timestampFromMs(0) }),
        ),
      /^expires_at must be in the future \(got 1970-01-01T00:00:00\.000Z; now is /,
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey({ ...updateKey(["name"], { name: "n" }), hash: "x" }),
      "hash must be 64 lowercase hex characters",
    );
    // A gRPC caller may name include_byok_in_limit without a value: it has no null to clear to.
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateKey(updateKey(["include_byok_in_limit"])),
      "include_byok_in_limit must be true or false",
    );
    ACCOUNT_REQUEST_RULES.updateKey(
      updateKey(["include_byok_in_limit"], { includeByokInLimit: false }),
    );
    // A null limit, rate limit, window or expiry removes it.
    ACCOUNT_REQUEST_RULES.updateKey(
      updateKey(["limit", "rate_limit_per_minute", "limit_reset", "expires_at"]),
    );
  });

  it("walks a workspace update's mask with the workspace's words", () => {
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace([])),
      "Update is empty: send at least one of name, slug, description, audio_cache, replay_data, replay_data_days (update_mask must name at least 1 field)",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace(["is_default"])),
      '"is_default" is not an updatable workspace field',
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace(["slug"], { name: "x" })),
      /^name is set but update_mask does not name it/,
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace(["slug"], { slug: "Bad Slug" })),
      "slug must be 1 to 64 lowercase letters, digits or inner hyphens",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace(["audio_cache"])),
      "audio_cache cannot be null",
    );
    expectInvalidArgument(
      () =>
        ACCOUNT_REQUEST_RULES.updateWorkspace(
          updateWorkspace(["description"], { description: "d".repeat(501) }),
        ),
      "description must be at most 500 characters",
    );
    ACCOUNT_REQUEST_RULES.updateWorkspace(updateWorkspace(["description"]));
    // A gRPC caller can send the enum's zero: it names no choice.
    expectInvalidArgument(
      () =>
        ACCOUNT_REQUEST_RULES.updateWorkspace(
          updateWorkspace(["replay_data"], { replayData: ReplayData.UNSPECIFIED }),
        ),
      'replay_data must be "none", "detections", "encrypted_input"',
    );
    expectInvalidArgument(
      () =>
        ACCOUNT_REQUEST_RULES.updateWorkspace(
          updateWorkspace(["replay_data_days"], { replayDataDays: 31 }),
        ),
      "replay_data_days must be an integer from 1 to 30",
    );
    ACCOUNT_REQUEST_RULES.updateWorkspace(
      updateWorkspace(["replay_data", "replay_data_days"], {
        replayData: ReplayData.DETECTIONS,
        replayDataDays: 30,
      }),
    );
  });

  it("checks a new key before anything is looked up", () => {
    const key = (init: object) =>
      create(CreateKeyRequestSchema, { name: "k", kind: KeyKind.STANDARD, ...init });
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.createKey(key({ name: " " })),
      "name must be 1 to 100 characters and not blank",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.createKey(key({ kind: KeyKind.MANAGEMENT, workspaceId: ID })),
      "workspace_id is not allowed for management keys",
    );
    expectInvalidArgument(
      () => ACCOUNT_REQUEST_RULES.createKey(key({ kind: KeyKind.UNSPECIFIED })),
      'kind must be "management" or "standard"',
    );
    ACCOUNT_REQUEST_RULES.createKey(key({ limitReset: KeyLimitReset.WEEKLY, limit: 5 }));
  });

  it("copies what a mask names, a null taking the field's zero value or unsetting it", () => {
    const stored = create(ApiKeySchema, { name: "old", limit: 5, disabled: true });
    copyMaskedFields(
      ApiKeySchema,
      stored,
      UpdateKeyRequestSchema,
      updateKey(["name", "limit"], { name: "new" }),
      ["name", "limit"],
    );
    expect([stored.name, stored.limit, stored.disabled]).to.deep.equal(["new", undefined, true]);
    const ws = create(WorkspaceSchema, { description: "d", audioCache: true });
    copyMaskedFields(WorkspaceSchema, ws, UpdateWorkspaceRequestSchema, updateWorkspace([]), [
      "description",
    ]);
    expect([ws.description, ws.audioCache]).to.deep.equal(["", true]);
  });

  it("runs the rule before a streaming handler too", async () => {
    let ran = false;
    const impl = Object.fromEntries(
      Object.keys(AccountService.method).map((name) => [name, async () => ({})]),
    );
    impl.watchInvalidations = async function* () {
      ran = true;
      yield { scope: "" };
    } as never;
    const checked = withRequestRules(AccountService, impl as never, {
      ...ACCOUNT_REQUEST_RULES,
      watchInvalidations: () => {
        throw new Error("refused");
      },
    });
    let error: unknown;
    try {
      for await (const _ of checked.watchInvalidations({} as never, {} as HandlerContext)) break;
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.equal("refused");
    expect(ran).to.equal(false);
  });
});
