import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import {
  ACTIVITY_JSON_SCHEMA,
  ACTIVITY_QUERY,
  ACTIVITY_QUERY_RULES,
  activityRequestFromQuery,
  activityToJson,
} from "../json/activity-json.js";
import { accessOf } from "../route-access.js";

export const activityRoutes: Route[] = [
  {
    pattern: "/api/v1/activity",
    access: accessOf(SpeechService.method.getActivity),
    docs: {
      GET: {
        summary:
          "Usage per UTC day, model and provider over the last 30 days (OpenRouter's activity)",
        description:
          "The management key reads every workspace's activity, or one (workspace_id); a standard key only its own requests. Refused requests are not counted (see /generations).",
        query: ACTIVITY_QUERY,
        queryRules: ACTIVITY_QUERY_RULES,
        status: 200,
        response: ACTIVITY_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = activityRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.speech.getActivity(req, ctx.call);
        sendJson(ctx.res, 200, activityToJson(res, req.byWorkspace));
      },
    },
  },
];
