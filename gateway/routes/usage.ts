import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import {
  USAGE_JSON_SCHEMA,
  USAGE_QUERY,
  USAGE_QUERY_RULES,
  usageRequestFromQuery,
  usageToJson,
} from "../json/usage-json.js";
import { accessOf } from "../route-access.js";

export const usageRoutes: Route[] = [
  {
    pattern: "/api/v1/usage",
    access: accessOf(SpeechService.method.getUsage),
    docs: {
      GET: {
        summary: "Usage series for charts: requests, spend, time to first byte, filter actions",
        description:
          "Per hour or UTC day (granularity, default day), by key, guardrail, model, provider, workspace or status (group_by, default model), over [from, to) (default: the last 30 days, or 48 hours by hour). label is the key's, guardrail's or workspace's name where one exists. The management key reads every workspace, or one (workspace_id); a standard key only its own requests.",
        query: USAGE_QUERY,
        queryRules: USAGE_QUERY_RULES,
        status: 200,
        response: USAGE_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = usageRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.speech.getUsage(req, ctx.call);
        sendJson(ctx.res, 200, usageToJson(res));
      },
    },
  },
];
