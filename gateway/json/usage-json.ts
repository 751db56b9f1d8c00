import type { MessageInitShape } from "@bufbuild/protobuf";
import { USAGE_GROUPS } from "../../domain/usage-groups.js";
import type {
  GetUsageRequestSchema,
  GetUsageResponse,
  UsagePoint,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  arrayOf,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { checkQuery } from "./fields.js";
import {
  queryEnum,
  queryTime,
  queryWorkspaceId,
  TIME_RULES,
  WORKSPACE_ID_RULES,
} from "./log-query.js";
import { isoOrNull } from "./proto-json.js";

export const USAGE_QUERY = ["granularity", "group_by", "from", "to", "workspace_id"] as const;
const GRANULARITIES = ["hour", "day"] as const;

export const USAGE_QUERY_RULES: Record<string, JsonSchema> = {
  granularity: { enum: GRANULARITIES },
  group_by: { enum: USAGE_GROUPS },
  from: TIME_RULES,
  to: TIME_RULES,
  workspace_id: WORKSPACE_ID_RULES,
};

/** GET /usage's query -> GetUsageRequest (the service fills in the defaults). */
export function usageRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof GetUsageRequestSchema> {
  checkQuery(q, USAGE_QUERY);
  return {
    granularity: queryEnum(q, "granularity", GRANULARITIES),
    groupBy: queryEnum(q, "group_by", USAGE_GROUPS),
    from: queryTime(q, "from"),
    to: queryTime(q, "to"),
    workspaceId: queryWorkspaceId(q),
  };
}

/** One point of a chart series: a bucket (its UTC start) and a group (a key, a model...). */
function pointToJson(p: UsagePoint) {
  return {
    bucket: isoOrNull(p.bucket) ?? "",
    group: p.group,
    label: p.label ?? null,
    requests: Number(p.requests),
    spend_usd: p.spendUsd,
    ttfb_p50_ms: p.ttfbP50Ms ?? null,
    ttfb_p95_ms: p.ttfbP95Ms ?? null,
    blocked: Number(p.blocked),
    redacted: Number(p.redacted),
    flagged: Number(p.flagged),
    // Refused requests, and how many by reason (budget_exceeded, rate_limited, ...).
    refused: Number(p.refused),
    refused_by_reason: Object.fromEntries(
      Object.entries(p.refusedByReason).map(([reason, n]) => [reason, Number(n)]),
    ),
  };
}

export function usageToJson(res: GetUsageResponse) {
  return { data: res.points.map(pointToJson) };
}

/** What usageToJson renders. */
export const USAGE_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof usageToJson>>({
  data: arrayOf(
    shapeOf<ReturnType<typeof pointToJson>>({
      bucket: DATE_TIME,
      group: STRING,
      label: orNull(STRING),
      requests: INTEGER,
      spend_usd: NUMBER,
      ttfb_p50_ms: orNull(NUMBER),
      ttfb_p95_ms: orNull(NUMBER),
      blocked: INTEGER,
      redacted: INTEGER,
      flagged: INTEGER,
      refused: INTEGER,
      refused_by_reason: { type: "object", additionalProperties: INTEGER },
    }),
  ),
});
