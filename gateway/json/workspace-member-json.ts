import type { MessageInitShape } from "@bufbuild/protobuf";
import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import {
  type WorkspaceMember,
  WorkspaceMemberRole,
} from "../../gen/railgate/account/v1/account_pb.js";
import type { ListWorkspaceMembersRequestSchema } from "../../gen/railgate/account/v1/account_service_pb.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import {
  badRequest,
  checkElements,
  checkFields,
  checkQuery,
  has,
  NOT_BLANK,
  queryPage,
  type Spec,
} from "./fields.js";
import { isoOrNull } from "./proto-json.js";

/** OpenRouter's WorkspaceMemberRole values. */
const ROLE_NAMES: Record<WorkspaceMemberRole, "admin" | "member" | null> = {
  [WorkspaceMemberRole.UNSPECIFIED]: null,
  [WorkspaceMemberRole.ADMIN]: "admin",
  [WorkspaceMemberRole.MEMBER]: "member",
};

/** OpenRouter's WorkspaceMember, with Railgate's `implicit` (docs/api.md "Workspace members"). */
export function workspaceMemberToJson(m: WorkspaceMember) {
  return {
    id: m.id,
    user_id: m.userId,
    workspace_id: m.workspaceId,
    role: ROLE_NAMES[m.role] ?? "member",
    created_at: isoOrNull(m.createdAt) ?? "",
    implicit: m.implicit,
  };
}

export const WORKSPACE_MEMBER_JSON_SCHEMA: JsonSchema = shapeOf<
  ReturnType<typeof workspaceMemberToJson>
>({
  id: { type: "string", format: "uuid" },
  user_id: STRING,
  workspace_id: { type: "string", format: "uuid" },
  role: { type: "string", enum: ["admin", "member"] },
  created_at: DATE_TIME,
  implicit: BOOLEAN,
});

export const MEMBERS_ADDED_SCHEMA: JsonSchema = shapeOf<{ added_count: number; data: unknown }>({
  added_count: { type: "integer", minimum: 0 },
  data: arrayOf(WORKSPACE_MEMBER_JSON_SCHEMA),
});

export const MEMBERS_REMOVED_SCHEMA: JsonSchema = shapeOf<{ removed_count: number }>({
  removed_count: { type: "integer", minimum: 0 },
});

const USER_IDS_SPEC: Spec = {
  user_ids: {
    type: "array",
    rules: { minItems: 1, maxItems: ACCOUNT_LIMITS.membersPerCallMax },
  },
};

export const MEMBERS_BODY_SCHEMA: JsonSchema = specSchema(USER_IDS_SPEC, {
  required: ["user_ids"],
  refine: {
    user_ids: arrayOf({
      type: "string",
      minLength: 1,
      maxLength: ACCOUNT_LIMITS.memberIdMax,
      pattern: NOT_BLANK,
    }),
  },
});

export const MEMBER_LIST_QUERY = ["offset", "limit"] as const;

/** GET /workspaces/:id/members's query -> ListWorkspaceMembersRequest. */
export function listMembersRequestFromQuery(
  workspaceId: string,
  q: URLSearchParams,
): MessageInitShape<typeof ListWorkspaceMembersRequestSchema> {
  checkQuery(q, MEMBER_LIST_QUERY);
  return { workspaceId, ...queryPage(q) };
}

/**
 * POST /workspaces/:id/members/add and /remove's body: `user_ids`, strings (the service checks
 * how many and how long, so a gRPC caller gets the same answers).
 */
export function membersRequestFromJson(
  workspaceId: string,
  body: Record<string, unknown>,
): { workspaceId: string; userIds: string[] } {
  checkFields(body, USER_IDS_SPEC);
  if (!has(body, "user_ids")) throw badRequest("user_ids is required");
  const values = body.user_ids as unknown[];
  checkElements("user_ids", values, "string");
  return { workspaceId, userIds: values as string[] };
}
