import type { GetCreditsResponse } from "../../gen/railgate/account/v1/account_service_pb.js";
import { ACCOUNT_LIMITS } from "../../platform/limits.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { badRequest, checkFields, checkQuery, type Spec } from "../json/fields.js";
import {
  BOOLEAN,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";

function creditsToJson(res: GetCreditsResponse) {
  return {
    total_credits: res.totalCreditsUsd,
    total_usage: res.totalUsageUsd,
    balance_usd: res.balanceUsd ?? null,
    metered: res.balanceUsd !== undefined,
  };
}

type CreditsJson = ReturnType<typeof creditsToJson>;
/** What creditsToJson renders; shapeOf makes a field added there without its schema a compile error. */
const CREDITS_JSON = {
  total_credits: NUMBER,
  total_usage: NUMBER,
  balance_usd: orNull(NUMBER),
  metered: BOOLEAN,
} satisfies { [K in keyof CreditsJson]-?: JsonSchema };

/** `{ data: credits + workspace_id }`: one workspace's (a string) or the organization's (null). */
function creditsSchema(workspaceId: JsonSchema): JsonSchema {
  return shapeOf<{ data: unknown }>({
    data: shapeOf<CreditsJson & { workspace_id: unknown }>({
      ...CREDITS_JSON,
      workspace_id: workspaceId,
    }),
  });
}

const ADDED_CREDITS_SCHEMA = shapeOf<{ data: unknown }>({
  data: shapeOf<{ workspace_id: unknown; balance_usd: unknown; metered: unknown }>({
    workspace_id: STRING,
    balance_usd: NUMBER,
    metered: { const: true },
  }),
});

const CREDITS_QUERY = ["workspace_id"] as const;
const ADD_CREDITS_SPEC: Spec = {
  // Non-zero too (the service says so): JSON Schema has no "not 0" short of `not`.
  amount_usd: {
    type: "number",
    rules: {
      minimum: -ACCOUNT_LIMITS.topUpUsdMax,
      maximum: ACCOUNT_LIMITS.topUpUsdMax,
      not: { const: 0 },
    },
  },
};

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
        response: creditsSchema(orNull(STRING)),
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
      GET: {
        summary: "Credits and usage of a workspace",
        status: 200,
        response: creditsSchema(STRING),
      },
      POST: {
        summary: "Add credits to a workspace (it becomes metered)",
        body: specSchema(ADD_CREDITS_SPEC, { required: ["amount_usd"] }),
        status: 200,
        response: ADDED_CREDITS_SCHEMA,
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
