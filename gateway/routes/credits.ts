import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { badRequest, checkFields } from "../json/fields.js";

export const creditRoutes: Route[] = [
  {
    pattern: "/api/v1/workspaces/:id/credits",
    access: "management",
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getCredits(
          { workspaceId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: {
            workspace_id: res.workspaceId,
            balance_usd: res.balanceUsd ?? null,
            metered: res.balanceUsd !== undefined,
          },
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, { amount_usd: { type: "number" } });
        if (body.amount_usd === undefined) throw badRequest("amount_usd is required");
        const res = await ctx.clients.accounts.addCredits(
          {
            workspaceId: ctx.params.id ?? "",
            amountUsd: body.amount_usd as number,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: { workspace_id: res.workspaceId, balance_usd: res.balanceUsd, metered: true },
        });
      },
    },
  },
];
