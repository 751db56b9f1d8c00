import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { GUARDRAIL_FIELDS } from "../../domain/guardrail-fields.js";
import { isKeyHash, isUuid } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS } from "../../domain/limits.js";
import { page } from "../../domain/paging.js";
import { shadowExpiry } from "../../domain/shadow-expiry.js";
import {
  type GuardrailInput,
  GuardrailInputSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { quote } from "../../platform/quote.js";
import {
  fail,
  noRule,
  type RequestRules,
  withRequestRules,
} from "../../platform/rpc/request-rules.js";
import { type UpdateMaskRules, walkUpdateMask } from "../../platform/rpc/update-mask.js";
import { nowTimestamp } from "../../platform/time.js";
import { guardrailFromInput, UPDATABLE_PATHS } from "./update-mask.js";
import { validateGuardrail } from "./validation.js";

/**
 * The guardrail service's input rules, one per RPC, in one place, in the
 * shape every service states them (platform/rpc/request-rules.ts): every call is
 * checked before its handler runs. What needs the store (does the workspace
 * exist, is the key in the guardrail's workspace) is checked by the handler;
 * the rules of a stored guardrail (validation.ts) are applied here to a new
 * guardrail, and by the update handler to the record an update would store
 * once its mask is applied.
 */

const MAX_SUBJECTS = GUARDRAIL_LIMITS.subjectsMax;
const SUBJECT_MAX = GUARDRAIL_LIMITS.subjectMax;

function uuid(field: string, id: string): void {
  if (!isUuid(id)) fail(`${field} must be a lowercase UUID, got ${quote(id)}`);
}

/** Versions count from 1. */
function versionNumber(n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) fail(`version must be a whole number from 1, got ${n}`);
}

function optionalUuid(field: string, id: string | undefined): void {
  if (id !== undefined) uuid(field, id);
}

/** The subjects of an assignment call: 1..1000 distinct, each 1..256 characters. */
function subjects(field: string, values: readonly string[]): void {
  const unique = [...new Set(values)];
  if (unique.length === 0) fail(`${field} must have at least 1 element`);
  if (unique.length > MAX_SUBJECTS) fail(`${field} may have at most ${MAX_SUBJECTS} elements`);
  unique.forEach((s, i) => {
    if (s.length === 0 || s.length > SUBJECT_MAX) {
      fail(`${field}[${i}] must be 1 to ${SUBJECT_MAX} characters`);
    }
  });
}

const CREATE_ONLY: ReadonlySet<string> = new Set(
  GUARDRAIL_FIELDS.fields.filter((f) => f.role === "create-only").map((f) => f.name),
);

function requireInput(input: GuardrailInput | undefined, name = "guardrail"): GuardrailInput {
  if (!input) fail(`${name} is required`);
  return input;
}

/**
 * What an update's mask may name: the field table's updatable paths. Only a
 * null name is refused per path; every other rule of a guardrail is checked
 * by the handler on the record the update would store (validation.ts), since
 * rules across fields need the stored ones too.
 */
const UPDATE_MASK: UpdateMaskRules<typeof GuardrailInputSchema> = {
  values: GuardrailInputSchema,
  prefix: "guardrail.",
  emptyHint: "one field to change",
  paths: Object.fromEntries(
    [...UPDATABLE_PATHS].map((path) => [
      path,
      path === "name"
        ? (input: GuardrailInput) => {
            if (input.name === undefined) fail("name cannot be null");
          }
        : noRule,
    ]),
  ),
  notUpdatable: (path) =>
    CREATE_ONLY.has(path)
      ? `${path} cannot be changed by an update`
      : `${quote(path)} is not an updatable guardrail field`,
};

export const GUARDRAIL_REQUEST_RULES: RequestRules<typeof GuardrailService> = {
  createGuardrail(req) {
    const input = requireInput(req.guardrail);
    if (input.name === undefined)
      fail(`name is required (1 to ${GUARDRAIL_LIMITS.nameMax} characters)`);
    optionalUuid("workspace_id", input.workspaceId);
    // The guardrail this request would create, with its defaults, under every stored rule.
    validateGuardrail(guardrailFromInput(input, "", input.workspaceId ?? "", nowTimestamp()));
  },
  getGuardrail: (req) => uuid("id", req.id),
  listGuardrails(req) {
    optionalUuid("workspace_id", req.workspaceId);
    page(req);
  },
  updateGuardrail(req) {
    uuid("id", req.id);
    walkUpdateMask(UPDATE_MASK, requireInput(req.guardrail), req.updateMask?.paths ?? []);
  },
  deleteGuardrail: (req) => uuid("id", req.id),
  simulateGuardrail(req) {
    uuid("id", req.id);
    // The change is checked as an update's body is, under the name the request gives it.
    walkUpdateMask(UPDATE_MASK, requireInput(req.change, "change"), req.updateMask?.paths ?? []);
  },
  assignKeys(req) {
    uuid("guardrail_id", req.guardrailId);
    subjects("key_hashes", req.keyHashes);
  },
  unassignKeys(req) {
    uuid("guardrail_id", req.guardrailId);
    subjects("key_hashes", req.keyHashes);
  },
  listKeyAssignments(req) {
    optionalUuid("guardrail_id", req.guardrailId);
    page(req);
  },
  assignMembers(req) {
    uuid("guardrail_id", req.guardrailId);
    subjects("member_user_ids", req.memberUserIds);
  },
  unassignMembers(req) {
    uuid("guardrail_id", req.guardrailId);
    subjects("member_user_ids", req.memberUserIds);
  },
  listMemberAssignments(req) {
    optionalUuid("guardrail_id", req.guardrailId);
    page(req);
  },
  getWorkspaceDefault: (req) => uuid("workspace_id", req.workspaceId),
  resolveEffectivePolicy(req) {
    if (!isKeyHash(req.keyHash)) fail("key_hash must be 64 lowercase hex characters");
  },
  listGuardrailVersions(req) {
    uuid("guardrail_id", req.guardrailId);
    page(req);
  },
  getGuardrailVersion(req) {
    uuid("guardrail_id", req.guardrailId);
    versionNumber(req.version);
  },
  restoreGuardrailVersion(req) {
    uuid("guardrail_id", req.guardrailId);
    versionNumber(req.version);
  },
  runGuardrailChecks: (req) => uuid("guardrail_id", req.guardrailId),
  startGuardrailShadow(req) {
    uuid("guardrail_id", req.guardrailId);
    walkUpdateMask(UPDATE_MASK, requireInput(req.change, "change"), req.updateMask?.paths ?? []);
    shadowExpiry(req.expiresAt && timestampMs(req.expiresAt), Date.now());
  },
  getGuardrailShadow: (req) => uuid("guardrail_id", req.guardrailId),
  promoteGuardrailShadow: (req) => uuid("guardrail_id", req.guardrailId),
  endGuardrailShadow: (req) => uuid("guardrail_id", req.guardrailId),
};

export { SHADOW_MAX_DAYS } from "../../domain/shadow-expiry.js";

/** The service with its rules in front of every method. */
export function checkedGuardrailService(
  impl: ServiceImpl<typeof GuardrailService>,
): ServiceImpl<typeof GuardrailService> {
  return withRequestRules(GuardrailService, impl, GUARDRAIL_REQUEST_RULES);
}
