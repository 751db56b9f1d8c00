import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  ActivityItem,
  GetActivityRequestSchema,
  GetActivityResponse,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  arrayOf,
  INTEGER,
  type JsonSchema,
  NUMBER,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { checkQuery } from "./fields.js";
import {
  KEY_HASH_RULES,
  queryEnum,
  queryKeyHash,
  queryPattern,
  queryWorkspaceId,
  WORKSPACE_ID_RULES,
} from "./log-query.js";

/** OpenRouter's GET /activity parameters; its user_id (org members) has no records here. */
export const ACTIVITY_QUERY = ["date", "workspace_id", "api_key_hash", "group_by"] as const;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export const ACTIVITY_QUERY_RULES: Record<string, JsonSchema> = {
  date: { type: "string", pattern: DAY.source },
  workspace_id: WORKSPACE_ID_RULES,
  api_key_hash: KEY_HASH_RULES,
  group_by: { enum: ["workspace"] },
};

/** GET /activity's query -> GetActivityRequest (byWorkspace also says how to render it). */
export function activityRequestFromQuery(q: URLSearchParams) {
  checkQuery(q, ACTIVITY_QUERY);
  const byWorkspace = queryEnum(q, "group_by", ["workspace"]) === "workspace";
  return {
    date: queryPattern(q, "date", DAY, "a day as YYYY-MM-DD"),
    workspaceId: queryWorkspaceId(q),
    keyHash: queryKeyHash(q, "api_key_hash"),
    byWorkspace,
  } satisfies MessageInitShape<typeof GetActivityRequestSchema>;
}

/**
 * One row of OpenRouter's activity (its ActivityItem, as @openrouter/sdk validates it): speech
 * has no tokens (0); the endpoint is the provider serving the model; `characters` is Railgate's.
 */
function activityItemToJson(a: ActivityItem, byWorkspace: boolean) {
  return {
    date: a.date,
    model: a.model,
    model_permaslug: a.model,
    endpoint_id: `${a.provider}/${a.model}`,
    provider_name: a.provider,
    usage: a.usage,
    byok_usage_inference: a.byokUsage,
    requests: Number(a.requests),
    prompt_tokens: 0,
    completion_tokens: 0,
    reasoning_tokens: 0,
    characters: Number(a.characters),
    ...(byWorkspace ? { workspace_id: a.workspaceId } : {}),
  };
}

/** The rows, each with its workspace_id when they were grouped by workspace. */
export function activityToJson(res: GetActivityResponse, byWorkspace: boolean) {
  return { data: res.items.map((a) => activityItemToJson(a, byWorkspace)) };
}

type ActivityItemJson = ReturnType<typeof activityItemToJson> & { workspace_id?: string };

/** Every field always present but workspace_id, which group_by=workspace adds (as OpenRouter). */
const ITEM = shapeOf<ActivityItemJson>({
  date: { type: "string", pattern: DAY.source },
  model: STRING,
  model_permaslug: STRING,
  endpoint_id: STRING,
  provider_name: STRING,
  usage: NUMBER,
  byok_usage_inference: NUMBER,
  requests: INTEGER,
  prompt_tokens: INTEGER,
  completion_tokens: INTEGER,
  reasoning_tokens: INTEGER,
  characters: INTEGER,
  workspace_id: STRING,
});

/** What activityToJson renders. */
export const ACTIVITY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof activityToJson>>({
  data: arrayOf({
    ...ITEM,
    required: (ITEM.required as string[]).filter((name) => name !== "workspace_id"),
  }),
});
