import type { GetCreditsResponse } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { badRequest, checkFields, checkQuery, type Spec } from "../json/fields.js";
import { specSchema } from "../openapi/spec-schema.js";

function creditsToJson(res: GetCreditsResponse) {
  return {
    total_credits: res.totalCreditsUsd,
    total_usage: res.totalUsageUsd,
    balance_usd: res.balanceUsd ?? null,
    metered: res.balanceUsd !== undefined,
  };
}

const CREDITS_QUERY = ["workspace_id"] as const;
const ADD_CREDITS_SPEC: Spec = { amount_usd: { type: "number" } };

export const creditRoutes: Route[] = [
  {
    // OpenRouter's GET /credits: the organization's credits, every workspace together
    // (or one workspace with ?workspace_id=). Unmetered workspaces add nothing to either total.
    pattern: "/api/v1/credits",
    access: "management",
    docs: {
      GET: {
        summary: "Credits and usage of the organization (or one workspace)",
        query: CREDITS_QUERY,
        status: 200,
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, CREDITS_QUERY);
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
    docs: {
      GET: { summary: "Credits and usage of a workspace", status: 200 },
      POST: {
        summary: "Add credits to a workspace (it becomes metered)",
        body: specSchema(ADD_CREDITS_SPEC, { required: ["amount_usd"] }),
        status: 200,
      },
    },
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
        checkFields(body, ADD_CREDITS_SPEC);
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
