import { REGION_NAMES } from "../../domain/enums.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import { EXPLAIN_SCHEMA, explainToJson } from "../json/explain-json.js";
import { checkQuery } from "../json/fields.js";
import { dataOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const EXPLAIN_QUERY = ["model", "region", "generation_id"] as const;

export const explainRoutes: Route[] = [
  {
    // Why a key's requests are allowed or refused (management).
    pattern: "/api/v1/keys/:hash/explain",
    access: accessOf(SpeechService.method.explain),
    docs: {
      GET: {
        summary:
          "Why a key's requests are allowed or refused: its guardrails, effective policy, budgets, eligible endpoints",
        query: EXPLAIN_QUERY,
        queryRules: { region: { enum: REGION_NAMES } },
        status: 200,
        response: dataOf(EXPLAIN_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, EXPLAIN_QUERY);
        const res = await ctx.clients.speech.explain(
          {
            keyHash: ctx.params.hash ?? "",
            model: ctx.url.searchParams.get("model") ?? "",
            region: ctx.url.searchParams.get("region") ?? "",
            generationId: ctx.url.searchParams.get("generation_id") ?? "",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: explainToJson(res) });
      },
    },
  },
];
