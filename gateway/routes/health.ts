import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";

export const healthRoutes: Route[] = [
  {
    pattern: "/healthz",
    access: "public",
    methods: {
      async GET(ctx) {
        // Reaching the account service proves the gRPC path and its store answer.
        await ctx.clients.accounts.listWorkspaces(
          { offset: 0, limit: 1 },
          { signal: ctx.signal, timeoutMs: 2000 },
        );
        sendJson(ctx.res, 200, { status: "ok", region: ctx.region });
      },
    },
  },
];
