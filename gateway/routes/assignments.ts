import { timestampDate } from "@bufbuild/protobuf/wkt";
import type {
  KeyAssignment,
  MemberAssignment,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { RequestContext, Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { checkElements, checkFields, checkQuery, queryPage } from "../json/fields.js";

function keyAssignmentJson(a: KeyAssignment) {
  return {
    id: a.id,
    key_hash: a.keyHash,
    guardrail_id: a.guardrailId,
    key_name: a.keyName,
    key_label: a.keyLabel,
    assigned_by: a.assignedBy || null,
    created_at: a.createdAt ? timestampDate(a.createdAt).toISOString() : null,
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
    created_at: a.createdAt ? timestampDate(a.createdAt).toISOString() : null,
  };
}

/**
 * Reads `{ <field>: [string, ...] }` (and nothing else). Omitted is no
 * subjects, which the service refuses (at least 1) like an empty array.
 */
async function readSubjects(ctx: RequestContext, field: string): Promise<string[]> {
  const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
  checkFields(body, { [field]: { type: "array" } });
  const values = (body[field] ?? []) as unknown[];
  checkElements(field, values, "string");
  return values as string[];
}

function paging(ctx: RequestContext) {
  checkQuery(ctx.url.searchParams, ["offset", "limit"]);
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
    access: "management",
    methods: { GET: (ctx) => listKeys(ctx) },
  },
  {
    pattern: "/api/v1/guardrails/assignments/members",
    access: "management",
    methods: { GET: (ctx) => listMembers(ctx) },
  },
  {
    pattern: "/api/v1/guardrails/:id/assignments/keys",
    access: "management",
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
    access: "management",
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
    access: "management",
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
    access: "management",
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
