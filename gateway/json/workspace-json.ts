import type { MessageInitShape } from "@bufbuild/protobuf";
import { REPLAY_DATA_MODES } from "../../domain/enums.js";
import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import { REPLAY_DATA_DAYS_MAX, replayDataDaysOf, replayDataOf } from "../../domain/replay-data.js";
import { SLUG_RE } from "../../domain/slug.js";
import type { ReplayData, Workspace } from "../../gen/railgate/account/v1/account_pb.js";
import type {
  CreateWorkspaceRequestSchema,
  ListWorkspacesRequestSchema,
  UpdateWorkspaceRequestSchema,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import type { GetAudioCacheResponse } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { quote } from "../../platform/quote.js";
import {
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  NULL,
  NUMBER,
  orNull,
  STRING,
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
import { isoOrNull } from "./proto-json.js";

type Json = Record<string, unknown>;

export function workspaceToJson(w: Workspace) {
  return {
    id: w.id,
    name: w.name,
    slug: w.slug,
    description: w.description || null,
    default_guardrail_id: w.defaultGuardrailId,
    is_default: w.isDefault,
    // Opt-in audio cache of POST /audio/speech (docs/api.md "Audio cache").
    audio_cache: w.audioCache,
    // What the request log keeps for what-if replays (docs/guardrail-changes.md "Replay data").
    replay_data: REPLAY_DATA_MODES.name(replayDataOf(w)) ?? "none",
    replay_data_days: replayDataDaysOf(w),
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
  audio_cache: BOOLEAN,
  replay_data: { enum: [...REPLAY_DATA_MODES.names] },
  replay_data_days: { type: "integer", minimum: 1, maximum: REPLAY_DATA_DAYS_MAX },
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

/**
 * GET /workspaces/:id/audio-cache (docs/api.md "Audio cache"): the workspace (found by id or slug)
 * and what its cache holds and answered.
 */
export function audioCacheToJson(ws: Workspace | undefined, res: GetAudioCacheResponse) {
  const served = Number(res.hits + res.collapsed);
  const total = served + Number(res.misses);
  return {
    workspace_id: ws?.id ?? "",
    enabled: ws?.audioCache ?? false,
    clips: Number(res.clips),
    bytes: Number(res.bytes),
    budget_bytes: Number(res.budgetBytes),
    hits: Number(res.hits),
    collapsed: Number(res.collapsed),
    misses: Number(res.misses),
    hit_ratio: total === 0 ? null : served / total,
  };
}

const AUDIO_CACHE_PROPERTIES = {
  workspace_id: { type: "string", format: "uuid" },
  enabled: BOOLEAN,
  clips: NUMBER,
  bytes: NUMBER,
  budget_bytes: NUMBER,
  hits: NUMBER,
  collapsed: NUMBER,
  misses: NUMBER,
  // Hits and collapsed requests over all lookups; null before the first.
  hit_ratio: orNull(NUMBER),
} satisfies { [K in keyof ReturnType<typeof audioCacheToJson>]-?: JsonSchema };

/** What audioCacheToJson renders (a field added there without its schema is a compile error). */
export const AUDIO_CACHE_JSON_SCHEMA: JsonSchema = {
  type: "object",
  required: Object.keys(AUDIO_CACHE_PROPERTIES),
  additionalProperties: false,
  properties: AUDIO_CACHE_PROPERTIES,
};

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
  audio_cache: { type: "boolean" },
  replay_data: { type: "string", rules: { enum: REPLAY_DATA_MODES.names } },
  replay_data_days: { type: "int32", rules: { minimum: 1, maximum: REPLAY_DATA_DAYS_MAX } },
};

/** replay_data's JSON value (checked by checkFields to be a string) as the enum. */
function replayDataOfJson(v: unknown): ReplayData | undefined {
  if (v === undefined) return undefined;
  if (!REPLAY_DATA_MODES.is(v)) {
    throw badRequest(`replay_data must be ${REPLAY_DATA_MODES.quoted}, got ${quote(String(v))}`);
  }
  return REPLAY_DATA_MODES.value(v);
}

/** On a create an empty slug (or none) is derived from the name. */
const CREATE_WORKSPACE_SPEC: Spec = {
  ...WORKSPACE_SPEC,
  slug: { type: "string", rules: { pattern: `^$|${SLUG_RE.source}` } },
};

export const CREATE_WORKSPACE_BODY_SCHEMA: JsonSchema = specSchema(CREATE_WORKSPACE_SPEC, {
  required: ["name"],
});
export const UPDATE_WORKSPACE_BODY_SCHEMA: JsonSchema = specSchema(WORKSPACE_SPEC);

export const WORKSPACE_LIST_QUERY = ["offset", "limit"] as const;

/** GET /workspaces's query -> ListWorkspacesRequest. */
export function listWorkspacesRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof ListWorkspacesRequestSchema> {
  checkQuery(q, WORKSPACE_LIST_QUERY);
  return queryPage(q);
}

/** POST /workspaces's body -> CreateWorkspaceRequest. */
export function createWorkspaceRequestFromJson(
  body: Json,
): MessageInitShape<typeof CreateWorkspaceRequestSchema> {
  checkFields(body, CREATE_WORKSPACE_SPEC);
  if (!has(body, "name")) throw badRequest("name is required");
  return {
    name: body.name as string,
    slug: (body.slug as string | undefined) ?? "",
    description: (body.description as string | null | undefined) ?? "",
    audioCache: (body.audio_cache as boolean | undefined) ?? false,
    replayData: replayDataOfJson(body.replay_data),
    replayDataDays: body.replay_data_days as number | undefined,
  };
}

/**
 * PATCH /workspaces/:id's body -> UpdateWorkspaceRequest. The keys present are the mask; an
 * empty one is the service's to refuse.
 */
export function updateWorkspaceRequestFromJson(
  id: string,
  body: Json,
): MessageInitShape<typeof UpdateWorkspaceRequestSchema> {
  checkFields(body, WORKSPACE_SPEC);
  return {
    id,
    name: body.name as string | undefined,
    slug: body.slug as string | undefined,
    description: (body.description as string | null | undefined) ?? undefined,
    audioCache: body.audio_cache as boolean | undefined,
    replayData: replayDataOfJson(body.replay_data),
    replayDataDays: body.replay_data_days as number | undefined,
    updateMask: { paths: Object.keys(body) },
  };
}
