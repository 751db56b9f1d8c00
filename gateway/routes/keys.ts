import { create } from "@bufbuild/protobuf";
import {
  type ApiKey,
  ApiKeySchema,
  KeyKind,
  type KeyUsage,
  KeyUsageSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import type { GetCurrentKeyResponse } from "../../gen/railgate/account/v1/account_service_pb.js";
import { ACCOUNT_LIMITS } from "../../platform/limits.js";
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
  INTEGER,
  type JsonSchema,
  NULL,
  NUMBER,
  orNull,
  pageOf,
  STRING,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";

/**
 * The limit and usage fields both key shapes (/keys and /key) carry. Key limits are all-time
 * credits (no reset) and never count BYOK spend, hence limit_reset null and
 * include_byok_in_limit false.
 */
function limitAndUsageToJson(k: ApiKey, u: KeyUsage) {
  return {
    limit: k.limit ?? null,
    limit_remaining: k.limit === undefined ? null : Math.max(0, k.limit - u.usageUsd),
    limit_reset: null,
    include_byok_in_limit: false,
    ...usageToJson(u),
  };
}

/**
 * A key in OpenRouter's shape (the fields @openrouter/sdk validates) plus Railgate's own.
 * Management keys belong to the organization, not a workspace: their workspace_id is "".
 */
export function keyToJson(k: ApiKey, usage: KeyUsage | undefined) {
  const u = usage ?? create(KeyUsageSchema);
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    kind: k.kind === KeyKind.MANAGEMENT ? "management" : "standard",
    workspace_id: k.workspaceId,
    member_user_id: k.memberUserId || null,
    creator_user_id: k.memberUserId || null,
    external_user: null,
    disabled: k.disabled,
    ...limitAndUsageToJson(k, u),
    rate_limit_per_minute: k.rateLimitPerMinute ?? null,
    guardrail_id: k.guardrailId || null,
    created_at: isoOrNull(k.createdAt) ?? "",
    updated_at: isoOrNull(k.updatedAt),
  };
}

function usageToJson(u: KeyUsage) {
  return {
    usage: u.usageUsd,
    usage_daily: u.usageDailyUsd,
    usage_weekly: u.usageWeeklyUsd,
    usage_monthly: u.usageMonthlyUsd,
    byok_usage: u.byokUsageUsd,
    byok_usage_daily: u.byokUsageDailyUsd,
    byok_usage_weekly: u.byokUsageWeeklyUsd,
    byok_usage_monthly: u.byokUsageMonthlyUsd,
  };
}

/**
 * GET /key: the calling key in OpenRouter's shape. Railgate has no free tier and no free
 * models (every model is priced), so the free-tier fields say so: not free tier, no free
 * daily requests.
 */
function currentKeyToJson(res: GetCurrentKeyResponse) {
  const k = res.key ?? create(ApiKeySchema);
  const u = res.usage ?? create(KeyUsageSchema);
  const management = k.kind === KeyKind.MANAGEMENT;
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    kind: management ? "management" : "standard",
    is_management_key: management,
    // OpenRouter's former name for a management key.
    is_provisioning_key: management,
    is_free_tier: false,
    free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
    workspace_id: k.workspaceId || null,
    organization_id: null,
    creator_user_id: k.memberUserId || null,
    member_user_id: k.memberUserId || null,
    disabled: k.disabled,
    ...limitAndUsageToJson(k, u),
    allowed_data_regions: res.allowedDataRegions,
    rate_limit: {
      requests: res.rateLimitPerMinute,
      interval: "1m",
      note: "Speech requests per minute for this key (0 = unlimited)",
    },
    guardrail_id: k.guardrailId || null,
    created_at: isoOrNull(k.createdAt),
    updated_at: isoOrNull(k.updatedAt),
  };
}

/**
 * OpenRouter's create-key fields: `creator_user_id` names the owning member (Railgate's
 * `member_user_id`; both may be sent when they agree). Railgate's key limits are all-time
 * and count credits only, so `limit_reset` may only be null and `include_byok_in_limit`
 * only false: other values are refused rather than silently not honoured.
 */
function checkOpenRouterKeyFields(body: Record<string, unknown>): void {
  const member = body.member_user_id ?? null;
  const creator = body.creator_user_id ?? null;
  if (member !== null && creator !== null && member !== creator) {
    throw badRequest(
      "creator_user_id and member_user_id name the key's owner: send one, or the same",
    );
  }
  if (body.limit_reset !== undefined && body.limit_reset !== null) {
    throw badRequest("limit_reset must be null: key limits are all-time (they do not reset)");
  }
  if (body.include_byok_in_limit === true) {
    throw badRequest("include_byok_in_limit must be false: key limits count credit spend only");
  }
}

function ownerOf(body: Record<string, unknown>): string {
  return ((body.member_user_id ?? body.creator_user_id) as string | null | undefined) ?? "";
}

function parseKind(v: unknown): KeyKind {
  if (v === undefined || v === "standard") return KeyKind.STANDARD;
  if (v === "management") return KeyKind.MANAGEMENT;
  throw badRequest(`kind must be "standard" or "management", got "${String(v).slice(0, 32)}"`);
}

const LIST_QUERY = ["offset", "limit", "workspace_id", "include_disabled"] as const;

const NAME = {
  type: "string",
  rules: { minLength: 1, maxLength: ACCOUNT_LIMITS.nameMax, pattern: NOT_BLANK },
} as const;
const MEMBER = {
  type: "string",
  nullable: true,
  rules: { maxLength: ACCOUNT_LIMITS.memberIdMax },
} as const;
const LIMIT = { type: "number", nullable: true, rules: { minimum: 0 } } as const;
const RATE_LIMIT = {
  type: "int32",
  nullable: true,
  rules: { minimum: 1, maximum: ACCOUNT_LIMITS.rateLimitPerMinuteMax },
} as const;

const CREATE_SPEC: Spec = {
  name: NAME,
  kind: { type: "string", rules: { enum: ["standard", "management"] } },
  workspace_id: { type: "string" },
  member_user_id: MEMBER,
  creator_user_id: MEMBER,
  limit: LIMIT,
  // Only the values Railgate honours (see checkOpenRouterKeyFields).
  include_byok_in_limit: { type: "boolean", rules: { const: false } },
  limit_reset: { type: "string", nullable: true, rules: { enum: [] } },
  rate_limit_per_minute: RATE_LIMIT,
};

const UPDATE_SPEC: Spec = {
  name: NAME,
  disabled: { type: "boolean" },
  limit: LIMIT,
  rate_limit_per_minute: RATE_LIMIT,
};

const KIND: JsonSchema = { enum: ["standard", "management"] };
const NULLABLE_STRING = orNull(STRING);

/** The limit and usage fields limitAndUsageToJson renders, shared by both key shapes. */
const LIMIT_AND_USAGE = {
  limit: orNull(NUMBER),
  limit_remaining: orNull(NUMBER),
  limit_reset: NULL,
  include_byok_in_limit: { const: false },
  usage: NUMBER,
  usage_daily: NUMBER,
  usage_weekly: NUMBER,
  usage_monthly: NUMBER,
  byok_usage: NUMBER,
  byok_usage_daily: NUMBER,
  byok_usage_weekly: NUMBER,
  byok_usage_monthly: NUMBER,
} satisfies { [K in keyof ReturnType<typeof limitAndUsageToJson>]-?: JsonSchema };

/** What keyToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const KEY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof keyToJson>>({
  hash: { type: "string", pattern: "^[0-9a-f]{64}$" },
  name: STRING,
  label: STRING,
  kind: KIND,
  workspace_id: STRING,
  member_user_id: NULLABLE_STRING,
  creator_user_id: NULLABLE_STRING,
  external_user: NULL,
  disabled: BOOLEAN,
  ...LIMIT_AND_USAGE,
  rate_limit_per_minute: orNull(INTEGER),
  guardrail_id: NULLABLE_STRING,
  created_at: { anyOf: [DATE_TIME, { const: "" }] },
  updated_at: orNull(DATE_TIME),
});

const CURRENT_KEY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof currentKeyToJson>>({
  hash: STRING,
  name: STRING,
  label: STRING,
  kind: KIND,
  is_management_key: BOOLEAN,
  is_provisioning_key: BOOLEAN,
  is_free_tier: { const: false },
  free_model_daily_requests: shapeOf<{ limit: 0; remaining: 0; used: 0 }>({
    limit: INTEGER,
    remaining: INTEGER,
    used: INTEGER,
  }),
  workspace_id: NULLABLE_STRING,
  organization_id: NULL,
  creator_user_id: NULLABLE_STRING,
  member_user_id: NULLABLE_STRING,
  disabled: BOOLEAN,
  ...LIMIT_AND_USAGE,
  allowed_data_regions: STRINGS,
  rate_limit: shapeOf<{ requests: number; interval: string; note: string }>({
    requests: { type: "integer", minimum: 0 },
    interval: STRING,
    note: STRING,
  }),
  guardrail_id: NULLABLE_STRING,
  created_at: orNull(DATE_TIME),
  updated_at: orNull(DATE_TIME),
});

const CREATED_KEY_SCHEMA: JsonSchema = shapeOf<{ data: unknown; key: unknown }>({
  data: KEY_JSON_SCHEMA,
  key: { type: "string", minLength: 1, description: "The key's secret: shown this once" },
});

export const keyRoutes: Route[] = [
  {
    pattern: "/api/v1/keys",
    access: "management",
    docs: {
      GET: {
        summary: "List API keys",
        query: LIST_QUERY,
        status: 200,
        response: pageOf(KEY_JSON_SCHEMA),
      },
      POST: {
        summary: "Create an API key (the secret is in the answer, once)",
        body: specSchema(CREATE_SPEC, { required: ["name"] }),
        status: 201,
        response: CREATED_KEY_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const q = ctx.url.searchParams;
        checkQuery(q, LIST_QUERY);
        const res = await ctx.clients.accounts.listKeys(
          {
            ...queryPage(q),
            workspaceId: q.get("workspace_id") ?? undefined,
            includeDisabled: q.get("include_disabled") === "true",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.keys.map((k, i) => keyToJson(k, res.usages[i])),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, CREATE_SPEC);
        if (!has(body, "name")) throw badRequest("name is required");
        checkOpenRouterKeyFields(body);
        const res = await ctx.clients.accounts.createKey(
          {
            name: body.name as string,
            kind: parseKind(body.kind),
            workspaceId: (body.workspace_id as string | undefined) ?? "",
            memberUserId: ownerOf(body),
            limit: (body.limit as number | null | undefined) ?? undefined,
            rateLimitPerMinute:
              (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
          },
          ctx.call,
        );
        sendJson(ctx.res, 201, { data: res.key && keyToJson(res.key, res.usage), key: res.secret });
      },
    },
  },
  {
    pattern: "/api/v1/keys/:hash",
    access: "management",
    docs: {
      GET: {
        summary: "Get an API key by its hash",
        status: 200,
        response: dataOf(KEY_JSON_SCHEMA),
      },
      PATCH: {
        summary: "Update an API key",
        body: specSchema(UPDATE_SPEC),
        status: 200,
        response: dataOf(KEY_JSON_SCHEMA),
      },
      DELETE: { summary: "Delete an API key", status: 200, response: DELETED },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getKey({ hash: ctx.params.hash ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key, res.usage) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, UPDATE_SPEC);
        const paths = Object.keys(body);
        if (paths.length === 0)
          throw badRequest("Update body is empty: send name, disabled or limit");
        const res = await ctx.clients.accounts.updateKey(
          {
            hash: ctx.params.hash ?? "",
            name: body.name as string | undefined,
            disabled: body.disabled as boolean | undefined,
            limit: (body.limit as number | null | undefined) ?? undefined,
            rateLimitPerMinute:
              (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
            updateMask: { paths },
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key, res.usage) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.accounts.deleteKey({ hash: ctx.params.hash ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
  {
    // Any valid key may ask about itself.
    pattern: "/api/v1/key",
    access: "any-key",
    docs: {
      GET: {
        summary: "The calling key: its limits and usage",
        status: 200,
        response: dataOf(CURRENT_KEY_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getCurrentKey({}, ctx.call);
        sendJson(ctx.res, 200, { data: currentKeyToJson(res) });
      },
    },
  },
];
