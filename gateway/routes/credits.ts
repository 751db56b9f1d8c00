import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import {
  ADD_CREDITS_BODY_SCHEMA,
  ADDED_CREDITS_JSON_SCHEMA,
  addCreditsRequestFromJson,
  addedCreditsToJson,
  CREDITS_QUERY,
  creditsRequestFromQuery,
  ORGANIZATION_CREDITS_JSON_SCHEMA,
  organizationCreditsToJson,
  WORKSPACE_CREDITS_JSON_SCHEMA,
  workspaceCreditsToJson,
} from "../json/credits-json.js";
import { accessOf } from "../route-access.js";

export const creditRoutes: Route[] = [
  {
    // OpenRouter's GET /credits: the organization's credits, every workspace together
    // (or one workspace with ?workspace_id=). Unmetered workspaces add nothing to either total.
    pattern: "/api/v1/credits",
    access: accessOf(AccountService.method.getCredits),
    docs: {
      GET: {
        summary: "Credits and usage of the organization (or one workspace)",
        query: CREDITS_QUERY,
        status: 200,
        response: ORGANIZATION_CREDITS_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = creditsRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.accounts.getCredits(req, ctx.call);
        sendJson(ctx.res, 200, organizationCreditsToJson(res));
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/credits",
    access: accessOf(AccountService.method.getCredits, AccountService.method.addCredits),
    docs: {
      GET: {
        summary: "Credits and usage of a workspace",
        status: 200,
        response: WORKSPACE_CREDITS_JSON_SCHEMA,
      },
      POST: {
        summary: "Add credits to a workspace (it becomes metered)",
        body: ADD_CREDITS_BODY_SCHEMA,
        status: 200,
        response: ADDED_CREDITS_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getCredits(
          { workspaceId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, workspaceCreditsToJson(res));
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = addCreditsRequestFromJson(ctx.params.id ?? "", body);
        const res = await ctx.clients.accounts.addCredits(req, ctx.call);
        sendJson(ctx.res, 200, addedCreditsToJson(res));
      },
    },
  },
];
