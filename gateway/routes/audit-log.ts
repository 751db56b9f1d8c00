import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Route } from "../context.js";
import { sendJson } from "../http-io.js";
import {
  AUDIT_PAGE_JSON_SCHEMA,
  AUDIT_QUERY,
  AUDIT_QUERY_RULES,
  auditPageToJson,
  listAuditEventsRequestFromQuery,
} from "../json/audit-json.js";
import { accessOf } from "../route-access.js";

export const auditLogRoutes: Route[] = [
  {
    pattern: "/api/v1/audit-log",
    access: accessOf(AccountService.method.listAuditEvents),
    docs: {
      GET: {
        summary:
          "The audit log: every management write (keys, guardrails, assignments, workspaces, credits, webhooks), newest first",
        query: AUDIT_QUERY,
        queryRules: AUDIT_QUERY_RULES,
        status: 200,
        response: AUDIT_PAGE_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = listAuditEventsRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.accounts.listAuditEvents(req, ctx.call);
        sendJson(ctx.res, 200, auditPageToJson(res));
      },
    },
  },
];
