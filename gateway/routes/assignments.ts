import { GUARDRAIL_LIMITS } from "../../domain/limits.js";
import type {
  KeyAssignment,
  MemberAssignment,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { RequestContext, Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { checkElements, checkFields, checkQuery, queryPage, type Spec } from "../json/fields.js";
import { isoOrNull } from "../json/proto-json.js";
import {
  DATE_TIME,
  type JsonSchema,
  orNull,
  pageOf,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

function keyAssignmentJson(a: KeyAssignment) {
  return {
    id: a.id,
    key_hash: a.keyHash,
    guardrail_id: a.guardrailId,
    key_name: a.keyName,
    key_label: a.keyLabel,
    assigned_by: a.assignedBy || null,
    created_at: isoOrNull(a.createdAt),
  };
}

function memberAssignmentJson(a: MemberAssignment) {
  return {
    id: a.id,
    user_id: a.userId,
    guardrail_id: a.guardrailId,
    workspace_id: a.workspaceId,
    organization_id: a.organizationId,
    assigned_by: a.assignedBy || null,
    created_at: isoOrNull(a.createdAt),
  };
}

const NULLABLE_STRING = orNull(STRING);

/** What keyAssignmentJson renders; shapeOf makes a field added there without its schema a compile error. */
const KEY_ASSIGNMENT_SCHEMA = shapeOf<ReturnType<typeof keyAssignmentJson>>({
  id: STRING,
  key_hash: STRING,
  guardrail_id: STRING,
  key_name: STRING,
  key_label: STRING,
  assigned_by: NULLABLE_STRING,
  created_at: orNull(DATE_TIME),
});

const MEMBER_ASSIGNMENT_SCHEMA = shapeOf<ReturnType<typeof memberAssignmentJson>>({
  id: STRING,
  user_id: STRING,
  guardrail_id: STRING,
  workspace_id: STRING,
  organization_id: STRING,
  assigned_by: NULLABLE_STRING,
  created_at: orNull(DATE_TIME),
});

const ASSIGNED = shapeOf<{ assigned_count: unknown }>({
  assigned_count: { type: "integer", minimum: 0 },
});
const UNASSIGNED = shapeOf<{ unassigned_count: unknown }>({
  unassigned_count: { type: "integer", minimum: 0 },
});

const PAGE_QUERY = ["offset", "limit"] as const;

type SubjectField = "key_hashes" | "member_user_ids";

function subjectSpec(field: SubjectField): Spec {
  return { [field]: { type: "array" } };
}

/** The body schema of an assign/unassign: the same table, its elements strings. */
function subjectSchema(field: SubjectField): JsonSchema {
  return specSchema(subjectSpec(field), {
    required: [field],
    // The service's bounds; it counts distinct values, so repeats past the maximum are fine.
    refine: {
      [field]: {
        type: "array",
        items: { type: "string", minLength: 1, maxLength: GUARDRAIL_LIMITS.subjectMax },
        minItems: 1,
        maxItems: GUARDRAIL_LIMITS.subjectsMax,
      },
    },
  });
}

/**
 * Reads `{ <field>: [string, ...] }` (and nothing else). Omitted is no
 * subjects, which the service refuses (at least 1) like an empty array.
 */
async function readSubjects(ctx: RequestContext, field: SubjectField): Promise<string[]> {
  const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
  checkFields(body, subjectSpec(field));
  const values = (body[field] ?? []) as unknown[];
  checkElements(field, values, "string");
  return values as string[];
}

function paging(ctx: RequestContext) {
  checkQuery(ctx.url.searchParams, PAGE_QUERY);
  return queryPage(ctx.url.searchParams);
}

async function listKeys(ctx: RequestContext, guardrailId?: string) {
  const res = await ctx.clients.guardrails.listKeyAssignments(
    { guardrailId, ...paging(ctx) },
    ctx.call,
  );
  sendJson(ctx.res, 200, {
    data: res.assignments.map(keyAssignmentJson),
    total_count: res.totalCount,
  });
}

async function listMembers(ctx: RequestContext, guardrailId?: string) {
  const res = await ctx.clients.guardrails.listMemberAssignments(
    { guardrailId, ...paging(ctx) },
    ctx.call,
  );
  sendJson(ctx.res, 200, {
    data: res.assignments.map(memberAssignmentJson),
    total_count: res.totalCount,
  });
}

export const assignmentRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails/assignments/keys",
    access: accessOf(GuardrailService.method.listKeyAssignments),
    docs: {
      GET: {
        summary: "List key assignments of every guardrail",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(KEY_ASSIGNMENT_SCHEMA),
      },
    },
    methods: { GET: (ctx) => listKeys(ctx) },
  },
  {
    pattern: "/api/v1/guardrails/assignments/members",
    access: accessOf(GuardrailService.method.listMemberAssignments),
    docs: {
      GET: {
        summary: "List member assignments of every guardrail",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(MEMBER_ASSIGNMENT_SCHEMA),
      },
    },
    methods: { GET: (ctx) => listMembers(ctx) },
  },
  {
    pattern: "/api/v1/guardrails/:id/assignments/keys",
    access: accessOf(
      GuardrailService.method.listKeyAssignments,
      GuardrailService.method.assignKeys,
    ),
    docs: {
      GET: {
        summary: "List a guardrail's key assignments",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(KEY_ASSIGNMENT_SCHEMA),
      },
      POST: {
        summary: "Assign keys to a guardrail",
        body: subjectSchema("key_hashes"),
        status: 200,
        response: ASSIGNED,
      },
    },
    methods: {
      GET: (ctx) => listKeys(ctx, ctx.params.id),
      async POST(ctx) {
        const keyHashes = await readSubjects(ctx, "key_hashes");
        const res = await ctx.clients.guardrails.assignKeys(
          {
            guardrailId: ctx.params.id ?? "",
            keyHashes,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { assigned_count: res.assignedCount });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/assignments/keys/remove",
    access: accessOf(GuardrailService.method.unassignKeys),
    docs: {
      POST: {
        summary: "Unassign keys from a guardrail",
        body: subjectSchema("key_hashes"),
        status: 200,
        response: UNASSIGNED,
      },
    },
    methods: {
      async POST(ctx) {
        const keyHashes = await readSubjects(ctx, "key_hashes");
        const res = await ctx.clients.guardrails.unassignKeys(
          {
            guardrailId: ctx.params.id ?? "",
            keyHashes,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { unassigned_count: res.unassignedCount });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/assignments/members",
    access: accessOf(
      GuardrailService.method.listMemberAssignments,
      GuardrailService.method.assignMembers,
    ),
    docs: {
      GET: {
        summary: "List a guardrail's member assignments",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(MEMBER_ASSIGNMENT_SCHEMA),
      },
      POST: {
        summary: "Assign members to a guardrail",
        body: subjectSchema("member_user_ids"),
        status: 200,
        response: ASSIGNED,
      },
    },
    methods: {
      GET: (ctx) => listMembers(ctx, ctx.params.id),
      async POST(ctx) {
        const memberUserIds = await readSubjects(ctx, "member_user_ids");
        const res = await ctx.clients.guardrails.assignMembers(
          {
            guardrailId: ctx.params.id ?? "",
            memberUserIds,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { assigned_count: res.assignedCount });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/assignments/members/remove",
    access: accessOf(GuardrailService.method.unassignMembers),
    docs: {
      POST: {
        summary: "Unassign members from a guardrail",
        body: subjectSchema("member_user_ids"),
        status: 200,
        response: UNASSIGNED,
      },
    },
    methods: {
      async POST(ctx) {
        const memberUserIds = await readSubjects(ctx, "member_user_ids");
        const res = await ctx.clients.guardrails.unassignMembers(
          {
            guardrailId: ctx.params.id ?? "",
            memberUserIds,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { unassigned_count: res.unassignedCount });
      },
    },
  },
];
