import type { GetCreditsResponse } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { badRequest, checkFields, checkQuery } from "../json/fields.js";

function creditsToJson(res: GetCreditsResponse) {
  return {
    total_credits: res.totalCreditsUsd,
    total_usage: res.totalUsageUsd,
    balance_usd: res.balanceUsd ?? null,
    metered: res.balanceUsd !== undefined,
  };
}

export const creditRoutes: Route[] = [
  {
    // OpenRouter's GET /credits: the organization's credits, every workspace together
    // (or one workspace with ?workspace_id=). Unmetered workspaces add nothing to either total.
    pattern: "/api/v1/credits",
    access: "management",
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, ["workspace_id"]);
        const workspaceId = ctx.url.searchParams.get("workspace_id");
        if (workspaceId === "") throw badRequest("workspace_id must not be empty");
        const res = await ctx.clients.accounts.getCredits(
          { workspaceId: workspaceId ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: { ...creditsToJson(res), workspace_id: res.workspaceId || null },
        });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/credits",
    access: "management",
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getCredits(
          { workspaceId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: { workspace_id: res.workspaceId, ...creditsToJson(res) } });
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
