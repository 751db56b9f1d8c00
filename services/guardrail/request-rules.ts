import { isFieldSet, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type GuardrailInput,
  GuardrailInputSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { invalidArgument } from "../../platform/errors.js";
import { isKeyHash, isUuid } from "../../platform/ids.js";
import { GUARDRAIL_LIMITS } from "../../platform/limits.js";
import { pageParams } from "../../platform/paging.js";
import { quote } from "../../platform/quote.js";
import { nowTimestamp } from "../../platform/time.js";
import { GUARDRAIL_FIELDS } from "./field-table.js";
import { guardrailFromInput, UPDATABLE_PATHS } from "./update-mask.js";
import { validateGuardrail } from "./validation.js";

/**
 * The guardrail service's input rules, one per RPC, in one place. Every call
 * is checked here before its handler runs (checkedGuardrailService below
 * wraps every method), whoever calls: the gateway (which only maps JSON to
 * messages) and any plain gRPC client get the same INVALID_ARGUMENT, with a
 * message that names the field and the rule. What needs the store (does the
 * workspace exist, is the key in the guardrail's workspace) is checked by the
 * handler; the rules of a stored guardrail (validation.ts) are applied here to
 * a new guardrail, and by the update handler to the record an update would
 * store once its mask is applied.
 */

type Method = keyof typeof GuardrailService.method;
type RequestOf<M extends Method> = MessageShape<(typeof GuardrailService.method)[M]["input"]>;
/** One rule per RPC: the type makes a new RPC without a rule a compile error. */
type RequestRules = { [M in Method]: (req: RequestOf<M>) => void };

const MAX_SUBJECTS = GUARDRAIL_LIMITS.subjectsMax;
const SUBJECT_MAX = GUARDRAIL_LIMITS.subjectMax;

function fail(message: string): never {
  throw invalidArgument(message);
}

function uuid(field: string, id: string): void {
  if (!isUuid(id)) fail(`${field} must be a lowercase UUID, got ${quote(id)}`);
}

function optionalUuid(field: string, id: string | undefined): void {
  if (id !== undefined) uuid(field, id);
}

function page(req: { offset: number; limit: number }): void {
  pageParams(req.offset, req.limit);
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

function requireInput(input: GuardrailInput | undefined): GuardrailInput {
  if (!input) fail("guardrail is required");
  return input;
}

/**
 * An update names what it changes in update_mask; a field in the mask but
 * unset in `guardrail` is the client's null. So an empty mask changes
 * nothing (refused, rather than answered OK with a new updated_at), and a
 * field set outside the mask would be silently dropped (refused).
 */
function updateMask(input: GuardrailInput, paths: readonly string[]): void {
  if (paths.length === 0) {
    fail(
      "Update is empty: send at least one field to change (update_mask must name at least 1 field)",
    );
  }
  for (const path of paths) {
    if (CREATE_ONLY.has(path)) fail(`${path} cannot be changed by an update`);
    if (!UPDATABLE_PATHS.has(path)) fail(`${quote(path)} is not an updatable guardrail field`);
  }
  for (const field of GuardrailInputSchema.fields) {
    if (isFieldSet(input, field) && !paths.includes(field.name)) {
      fail(
        `guardrail.${field.name} is set but update_mask does not name it: add "${field.name}" to update_mask, or leave the field unset`,
      );
    }
  }
  if (paths.includes("name") && input.name === undefined) fail("name cannot be null");
}

export const GUARDRAIL_REQUEST_RULES: RequestRules = {
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
    updateMask(requireInput(req.guardrail), req.updateMask?.paths ?? []);
  },
  deleteGuardrail: (req) => uuid("id", req.id),
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
};

/**
 * The service with its rules in front of every method: no handler runs on a
 * request its rule refuses, so a refused call changes nothing.
 */
export function checkedGuardrailService(
  impl: ServiceImpl<typeof GuardrailService>,
): ServiceImpl<typeof GuardrailService> {
  const checked: Record<string, unknown> = {};
  for (const name of Object.keys(GuardrailService.method) as Method[]) {
    const rule = GUARDRAIL_REQUEST_RULES[name] as (req: unknown) => void;
    const handler = impl[name].bind(impl) as (req: unknown, ctx: HandlerContext) => unknown;
    checked[name] = async (req: unknown, ctx: HandlerContext) => {
      rule(req);
      return handler(req, ctx);
    };
  }
  return checked as ServiceImpl<typeof GuardrailService>;
}
