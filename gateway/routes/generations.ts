import { FILTER_OUTCOMES, GENERATION_STATUSES } from "../../domain/enums.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { sendJson } from "../http-io.js";
import { badRequest, checkQuery, queryInt } from "../json/fields.js";
import { GENERATION_SCHEMA, generationToJson } from "../json/generation-json.js";
import {
  KEY_HASH_RULES,
  queryEnumValue,
  queryKeyHash,
  queryTime,
  queryWorkspaceId,
  TIME_RULES,
  WORKSPACE_ID_RULES,
} from "../json/log-query.js";
import {
  arrayOf,
  BOOLEAN,
  dataOf,
  INTEGER,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const GENERATION_QUERY = ["id"] as const;
const LIST_QUERY = [
  "limit",
  "cursor",
  "key_hash",
  "model",
  "provider",
  "status",
  "outcome",
  "guardrail_id",
  "policy_id",
  "from",
  "to",
  "workspace_id",
  "refusal_reason",
  "q",
] as const;
const MAX_LIMIT = 100;

const LIST_SCHEMA = shapeOf<{
  data: unknown;
  next_cursor: unknown;
  total_count: unknown;
  total_count_is_estimate: unknown;
}>({
  data: arrayOf(GENERATION_SCHEMA),
  next_cursor: orNull(STRING),
  total_count: INTEGER,
  total_count_is_estimate: BOOLEAN,
});

export const generationRoutes: Route[] = [
  {
    pattern: "/api/v1/generation",
    access: accessOf(SpeechService.method.getGeneration),
    docs: {
      GET: {
        summary: "A generation's record (cost, timing, guardrail outcomes)",
        description:
          "A standard key reads its workspace's records; the management key any workspace's.",
        query: GENERATION_QUERY,
        status: 200,
        response: dataOf(GENERATION_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, GENERATION_QUERY);
        const id = ctx.url.searchParams.get("id");
        if (!id)
          throw new HttpError(400, "id is required (GET /api/v1/generation?id=<generation id>)");
        const res = await ctx.clients.speech.getGeneration({ id }, ctx.call);
        sendJson(ctx.res, 200, { data: res.generation && generationToJson(res.generation) });
      },
    },
  },
  {
    pattern: "/api/v1/generations",
    access: accessOf(SpeechService.method.listGenerations),
    docs: {
      GET: {
        summary: "The request log: generations newest first, served and refused, with filters",
        description:
          "A standard key lists the records made with it; the management key every workspace's, or one (workspace_id). Paged by next_cursor; outcome, guardrail_id and policy_id filter by what the guardrails and guardrail policies decided, refusal_reason by why a request was refused; q searches generation ids, models and key names. total_count is every match's count (the database's estimate past 10,000: total_count_is_estimate).",
        query: LIST_QUERY,
        queryRules: {
          limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT },
          key_hash: KEY_HASH_RULES,
          status: { enum: GENERATION_STATUSES.names },
          outcome: { enum: FILTER_OUTCOMES.names },
          from: TIME_RULES,
          to: TIME_RULES,
          workspace_id: WORKSPACE_ID_RULES,
          refusal_reason: { type: "string", pattern: "^[a-z][a-z_]{0,63}$" },
          q: { type: "string", maxLength: 200 },
        },
        status: 200,
        response: LIST_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const q = ctx.url.searchParams;
        checkQuery(q, LIST_QUERY);
        const limit = queryInt(q, "limit");
        if (q.has("limit") && (limit < 1 || limit > MAX_LIMIT))
          throw badRequest(`limit must be an integer from 1 to ${MAX_LIMIT}, got ${limit}`);
        const res = await ctx.clients.speech.listGenerations(
          {
            limit,
            cursor: q.get("cursor") ?? "",
            keyHash: queryKeyHash(q, "key_hash"),
            model: q.get("model") ?? "",
            provider: q.get("provider") ?? "",
            status: queryEnumValue(q, "status", GENERATION_STATUSES),
            outcome: queryEnumValue(q, "outcome", FILTER_OUTCOMES),
            guardrailId: q.get("guardrail_id") ?? "",
            policyId: q.get("policy_id") ?? "",
            from: queryTime(q, "from"),
            to: queryTime(q, "to"),
            workspaceId: queryWorkspaceId(q),
            refusalReason: q.get("refusal_reason") ?? "",
            q: q.get("q") ?? "",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.generations.map(generationToJson),
          next_cursor: res.nextCursor || null,
          total_count: Number(res.totalCount),
          total_count_is_estimate: res.totalCountIsEstimate,
        });
      },
    },
  },
];
