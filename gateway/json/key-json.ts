import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { KEY_LIMIT_RESETS, regionName } from "../../domain/enums.js";
import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import {
  type ApiKey,
  ApiKeySchema,
  KeyKind,
  type KeyLimitReset,
  type KeyUsage,
  KeyUsageSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import type {
  CreateKeyRequestSchema,
  CreateKeyResponse,
  GetCurrentKeyResponse,
  ListKeysRequestSchema,
  ListKeysResponse,
  UpdateKeyRequestSchema,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { quote } from "../../platform/quote.js";
import {
  BOOLEAN,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  NULL,
  NUMBER,
  orNull,
  STRING,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import {
  badRequest,
  checkFields,
  checkQuery,
  has,
  NOT_BLANK,
  queryPage,
  type Spec,
} from "./fields.js";
import { parseInstant } from "./instant.js";
import { isoOrNull } from "./proto-json.js";

type Json = Record<string, unknown>;

/**
 * The spend a key's limit is checked against: its limit_reset window's, else all of it; with
 * include_byok_in_limit, the BYOK spend of the same window too (what admission adds up).
 */
function limitSpend(k: ApiKey, u: KeyUsage): number {
  const byok = k.includeByokInLimit;
  switch (KEY_LIMIT_RESETS.name(k.limitReset)) {
    case "daily":
      return u.usageDailyUsd + (byok ? u.byokUsageDailyUsd : 0);
    case "weekly":
      return u.usageWeeklyUsd + (byok ? u.byokUsageWeeklyUsd : 0);
    case "monthly":
      return u.usageMonthlyUsd + (byok ? u.byokUsageMonthlyUsd : 0);
    default:
      return u.usageUsd + (byok ? u.byokUsageUsd : 0);
  }
}

/**
 * The limit and usage fields both key shapes (/keys and /key) carry. A limit applies per
 * limit_reset window (UTC) or all-time (null), on credit spend, plus BYOK spend when
 * include_byok_in_limit is true.
 */
function limitAndUsageToJson(k: ApiKey, u: KeyUsage) {
  return {
    limit: k.limit ?? null,
    limit_remaining: k.limit === undefined ? null : Math.max(0, k.limit - limitSpend(k, u)),
    limit_reset: KEY_LIMIT_RESETS.name(k.limitReset) ?? null,
    include_byok_in_limit: k.includeByokInLimit,
    expires_at: isoOrNull(k.expiresAt),
    ...usageToJson(u),
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
    last_used_at: isoOrNull(u.lastUsedAt),
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

/** A page of keys, each beside its usage (the response pairs them by index). */
export function keysToJson(res: ListKeysResponse) {
  return res.keys.map((k, i) => keyToJson(k, res.usages[i]));
}

/** A new key and its secret, which no other answer carries. */
export function createdKeyToJson(res: CreateKeyResponse) {
  return { data: res.key && keyToJson(res.key, res.usage), key: res.secret };
}

/**
 * GET /key: the calling key in OpenRouter's shape. Railgate has no free tier and no free
 * models (every model is priced), so the free-tier fields say so: not free tier, no free
 * daily requests.
 */
export function currentKeyToJson(res: GetCurrentKeyResponse) {
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
    allowed_data_regions: res.allowedDataRegions.flatMap((r) => regionName(r) ?? []),
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

const KIND: JsonSchema = { enum: ["standard", "management"] };
const NULLABLE_STRING = orNull(STRING);

/** The limit and usage fields limitAndUsageToJson renders, shared by both key shapes. */
const LIMIT_AND_USAGE = {
  limit: orNull(NUMBER),
  limit_remaining: orNull(NUMBER),
  limit_reset: orNull({ enum: KEY_LIMIT_RESETS.names }),
  include_byok_in_limit: BOOLEAN,
  expires_at: orNull(DATE_TIME),
  usage: NUMBER,
  usage_daily: NUMBER,
  usage_weekly: NUMBER,
  usage_monthly: NUMBER,
  byok_usage: NUMBER,
  byok_usage_daily: NUMBER,
  byok_usage_weekly: NUMBER,
  byok_usage_monthly: NUMBER,
  last_used_at: orNull(DATE_TIME),
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

export const CREATED_KEY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof createdKeyToJson>>({
  data: KEY_JSON_SCHEMA,
  key: { type: "string", minLength: 1, description: "The key's secret: shown this once" },
});

export const CURRENT_KEY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof currentKeyToJson>>({
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

export const KEY_LIST_QUERY = ["offset", "limit", "workspace_id", "include_disabled", "q"] as const;

/** GET /keys's query -> ListKeysRequest. */
export function listKeysRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof ListKeysRequestSchema> {
  checkQuery(q, KEY_LIST_QUERY);
  return {
    ...queryPage(q),
    workspaceId: q.get("workspace_id") ?? undefined,
    includeDisabled: q.get("include_disabled") === "true",
    q: q.get("q") ?? "",
  };
}

/**
 * OpenRouter's create-key fields: `creator_user_id` names the owning member (Railgate's
 * `member_user_id`; both may be sent when they agree).
 */
function checkOpenRouterKeyFields(body: Json): void {
  const member = body.member_user_id ?? null;
  const creator = body.creator_user_id ?? null;
  if (member !== null && creator !== null && member !== creator) {
    throw badRequest(
      "creator_user_id and member_user_id name the key's owner: send one, or the same",
    );
  }
}

/** limit_reset's JSON value (checked by checkFields to be a string or null) as the enum. */
function limitResetOf(v: unknown): KeyLimitReset | undefined {
  if (v === undefined || v === null) return undefined;
  if (!KEY_LIMIT_RESETS.is(v)) {
    throw badRequest(
      `limit_reset must be ${KEY_LIMIT_RESETS.quoted} or null, got ${quote(String(v))}`,
    );
  }
  return KEY_LIMIT_RESETS.value(v);
}

/**
 * expires_at as OpenRouter takes it: an ISO 8601 instant with seconds and a zone
 * (YYYY-MM-DDTHH:MM:SSZ, fractions allowed). Whether it lies in the future is the service's
 * rule (so gRPC callers get it too).
 */
const EXPIRES_AT_PATTERN =
  "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$";

function expiresAtOf(v: unknown): Timestamp | undefined {
  if (v === undefined || v === null) return undefined;
  const text = String(v);
  const at = new RegExp(EXPIRES_AT_PATTERN).test(text) ? parseInstant(text) : undefined;
  if (!at) {
    throw badRequest(
      `expires_at must be an ISO 8601 UTC instant with seconds (YYYY-MM-DDTHH:MM:SSZ) or null, got ${quote(text)}`,
    );
  }
  return timestampFromDate(at);
}

function ownerOf(body: Json): string {
  return ((body.member_user_id ?? body.creator_user_id) as string | null | undefined) ?? "";
}

function parseKind(v: unknown): KeyKind {
  if (v === undefined || v === "standard") return KeyKind.STANDARD;
  if (v === "management") return KeyKind.MANAGEMENT;
  throw badRequest(`kind must be "standard" or "management", got "${String(v).slice(0, 32)}"`);
}

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

const LIMIT_RESET = {
  type: "string",
  nullable: true,
  rules: { enum: KEY_LIMIT_RESETS.names },
} as const;
const EXPIRES_AT = {
  type: "string",
  nullable: true,
  rules: { format: "date-time", pattern: EXPIRES_AT_PATTERN },
} as const;

const CREATE_SPEC: Spec = {
  name: NAME,
  kind: { type: "string", rules: { enum: ["standard", "management"] } },
  workspace_id: { type: "string" },
  member_user_id: MEMBER,
  creator_user_id: MEMBER,
  limit: LIMIT,
  include_byok_in_limit: { type: "boolean" },
  limit_reset: LIMIT_RESET,
  expires_at: EXPIRES_AT,
  rate_limit_per_minute: RATE_LIMIT,
};

const UPDATE_SPEC: Spec = {
  name: NAME,
  disabled: { type: "boolean" },
  limit: LIMIT,
  limit_reset: LIMIT_RESET,
  expires_at: EXPIRES_AT,
  rate_limit_per_minute: RATE_LIMIT,
  include_byok_in_limit: { type: "boolean" },
};

export const CREATE_KEY_BODY_SCHEMA: JsonSchema = specSchema(CREATE_SPEC, { required: ["name"] });
export const UPDATE_KEY_BODY_SCHEMA: JsonSchema = specSchema(UPDATE_SPEC);

/** POST /keys's body -> CreateKeyRequest (types and OpenRouter's fields checked here). */
export function createKeyRequestFromJson(
  body: Json,
): MessageInitShape<typeof CreateKeyRequestSchema> {
  checkFields(body, CREATE_SPEC);
  if (!has(body, "name")) throw badRequest("name is required");
  checkOpenRouterKeyFields(body);
  return {
    name: body.name as string,
    kind: parseKind(body.kind),
    workspaceId: (body.workspace_id as string | undefined) ?? "",
    memberUserId: ownerOf(body),
    limit: (body.limit as number | null | undefined) ?? undefined,
    rateLimitPerMinute: (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
    limitReset: limitResetOf(body.limit_reset),
    expiresAt: expiresAtOf(body.expires_at),
    includeByokInLimit: body.include_byok_in_limit === true,
  };
}

/** PATCH /keys/:hash's body -> UpdateKeyRequest; the keys present are the update mask. */
export function updateKeyRequestFromJson(
  hash: string,
  body: Json,
): MessageInitShape<typeof UpdateKeyRequestSchema> {
  checkFields(body, UPDATE_SPEC);
  const paths = Object.keys(body);
  if (paths.length === 0)
    throw badRequest(
      `Update body is empty: send at least one of ${Object.keys(UPDATE_SPEC).join(", ")}`,
    );
  return {
    hash,
    name: body.name as string | undefined,
    disabled: body.disabled as boolean | undefined,
    limit: (body.limit as number | null | undefined) ?? undefined,
    rateLimitPerMinute: (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
    limitReset: limitResetOf(body.limit_reset),
    expiresAt: expiresAtOf(body.expires_at),
    includeByokInLimit: body.include_byok_in_limit as boolean | undefined,
    updateMask: { paths },
  };
}
