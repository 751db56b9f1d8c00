import type { Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { sendJson } from "../http-io.js";

export const healthRoutes: Route[] = [
  {
    pattern: "/healthz",
    access: "public",
    methods: {
      async GET(ctx) {
        // Reaching the account service proves the gRPC path and its store answer; when they
        // do not, a load balancer needs 503 (take this instance out), not a generic 500.
        try {
          await ctx.clients.accounts.listWorkspaces(
            { offset: 0, limit: 1 },
            { ...ctx.call, timeoutMs: 2000 },
          );
        } catch {
          throw new HttpError(
            503,
            "Service unavailable: the account service or its store is not answering",
          );
        }
        sendJson(ctx.res, 200, { status: "ok", region: ctx.region });
      },
    },
  },
];
