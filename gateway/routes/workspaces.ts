import type { Workspace } from "../../gen/railgate/account/v1/account_pb.js";
import { ACCOUNT_LIMITS } from "../../platform/limits.js";
import { SLUG_RE } from "../../services/account/slug.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import {
  badRequest,
  checkFields,
  checkQuery,
  has,
  NOT_BLANK,
  queryPage,
  type Spec,
} from "../json/fields.js";
import { isoOrNull } from "../json/proto-json.js";
import {
  BOOLEAN,
  DATE_TIME,
  DELETED,
  dataOf,
  type JsonSchema,
  NULL,
  NUMBER,
  orNull,
  pageOf,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";

function workspaceToJson(w: Workspace) {
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    description: w.description || null,
    default_guardrail_id: w.defaultGuardrailId,
    is_default: w.isDefault,
    created_at: isoOrNull(w.createdAt) ?? "",
    updated_at: isoOrNull(w.updatedAt),
    // OpenRouter's workspace settings that Railgate has no feature for: none set, all off.
    created_by: null,
    default_text_model: null,
    default_image_model: null,
    default_provider_sort: null,
    io_logging_api_key_ids: null,
    io_logging_sampling_rate: 0,
    is_data_discount_logging_enabled: false,
    is_observability_broadcast_enabled: false,
    is_observability_io_logging_enabled: false,
  };
}

/** What workspaceToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const WORKSPACE_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof workspaceToJson>>({
  id: { type: "string", format: "uuid" },
  name: STRING,
  slug: STRING,
  description: orNull(STRING),
  default_guardrail_id: STRING,
  is_default: BOOLEAN,
  created_at: { anyOf: [DATE_TIME, { const: "" }] },
  updated_at: orNull(DATE_TIME),
  created_by: NULL,
  default_text_model: NULL,
  default_image_model: NULL,
  default_provider_sort: NULL,
  io_logging_api_key_ids: NULL,
  io_logging_sampling_rate: NUMBER,
  is_data_discount_logging_enabled: BOOLEAN,
  is_observability_broadcast_enabled: BOOLEAN,
  is_observability_io_logging_enabled: BOOLEAN,
});

const WORKSPACE_SPEC: Spec = {
  name: {
    type: "string",
    rules: { minLength: 1, maxLength: ACCOUNT_LIMITS.nameMax, pattern: NOT_BLANK },
  },
  slug: { type: "string", rules: { pattern: SLUG_RE.source } },
  description: {
    type: "string",
    nullable: true,
    rules: { maxLength: ACCOUNT_LIMITS.descriptionMax },
  },
};

/** On a create an empty slug (or none) is derived from the name. */
const CREATE_WORKSPACE_SPEC: Spec = {
  ...WORKSPACE_SPEC,
  slug: { type: "string", rules: { pattern: `^$|${SLUG_RE.source}` } },
};

const LIST_QUERY = ["offset", "limit"] as const;

export const workspaceRoutes: Route[] = [
  {
    pattern: "/api/v1/workspaces",
    access: "management",
    docs: {
      GET: {
        summary: "List workspaces",
        query: LIST_QUERY,
        status: 200,
        response: pageOf(WORKSPACE_JSON_SCHEMA),
      },
      POST: {
        summary: "Create a workspace",
        body: specSchema(CREATE_WORKSPACE_SPEC, { required: ["name"] }),
        status: 201,
        response: dataOf(WORKSPACE_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, LIST_QUERY);
        const res = await ctx.clients.accounts.listWorkspaces(
          queryPage(ctx.url.searchParams),
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.workspaces.map(workspaceToJson),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, CREATE_WORKSPACE_SPEC);
        if (!has(body, "name")) throw badRequest("name is required");
        const res = await ctx.clients.accounts.createWorkspace(
          {
            name: body.name as string,
            slug: (body.slug as string | undefined) ?? "",
            description: (body.description as string | null | undefined) ?? "",
          },
          ctx.call,
        );
        sendJson(ctx.res, 201, { data: res.workspace && workspaceToJson(res.workspace) });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id",
    access: "management",
    docs: {
      GET: { summary: "Get a workspace", status: 200, response: dataOf(WORKSPACE_JSON_SCHEMA) },
      PATCH: {
        summary: "Update a workspace",
        body: specSchema(WORKSPACE_SPEC),
        status: 200,
        response: dataOf(WORKSPACE_JSON_SCHEMA),
      },
      DELETE: { summary: "Delete a workspace", status: 200, response: DELETED },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getWorkspace({ id: ctx.params.id ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.workspace && workspaceToJson(res.workspace) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, WORKSPACE_SPEC);
        // The keys present are the mask; an empty one is the service's to refuse.
        const paths = Object.keys(body);
        const res = await ctx.clients.accounts.updateWorkspace(
          {
            id: ctx.params.id ?? "",
            name: body.name as string | undefined,
            slug: body.slug as string | undefined,
            description: (body.description as string | null | undefined) ?? undefined,
            updateMask: { paths },
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.workspace && workspaceToJson(res.workspace) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.accounts.deleteWorkspace(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
];
