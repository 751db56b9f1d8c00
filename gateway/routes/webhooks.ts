import { WebhookService } from "../../gen/railgate/webhook/v1/webhook_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import {
  CREATE_WEBHOOK_BODY_SCHEMA,
  CREATED_WEBHOOK_JSON_SCHEMA,
  createdWebhookToJson,
  createWebhookRequestFromJson,
  DELIVERIES_QUERY,
  DELIVERIES_QUERY_RULES,
  DELIVERY_JSON_SCHEMA,
  DELIVERY_PAGE_JSON_SCHEMA,
  deliveriesRequestFromQuery,
  deliveryPageToJson,
  deliveryToJson,
  listWebhooksRequestFromQuery,
  UPDATE_WEBHOOK_BODY_SCHEMA,
  updateWebhookRequestFromJson,
  WEBHOOK_JSON_SCHEMA,
  WEBHOOK_LIST_QUERY,
  WEBHOOK_LIST_QUERY_RULES,
  webhookToJson,
} from "../json/webhook-json.js";
import { DELETED, dataOf, pageOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const URL_RULE =
  "`url`: http:// or https://, at most 2048 characters, no user:password@ and no #fragment.";

export const webhookRoutes: Route[] = [
  {
    pattern: "/api/v1/webhooks",
    access: accessOf(WebhookService.method.listWebhooks, WebhookService.method.createWebhook),
    docs: {
      GET: {
        summary: "List budget-alert webhooks (every workspace, or one)",
        query: WEBHOOK_LIST_QUERY,
        queryRules: WEBHOOK_LIST_QUERY_RULES,
        status: 200,
        response: pageOf(WEBHOOK_JSON_SCHEMA),
      },
      POST: {
        summary: "Create a budget-alert webhook (the secret is answered once)",
        description: `${URL_RULE} Without \`secret\` one is generated; without \`thresholds_pct\` they are 50, 80 and 100.`,
        body: CREATE_WEBHOOK_BODY_SCHEMA,
        status: 201,
        response: CREATED_WEBHOOK_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = listWebhooksRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.webhooks.listWebhooks(req, ctx.call);
        sendJson(ctx.res, 200, {
          data: res.webhooks.map(webhookToJson),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = createWebhookRequestFromJson(body);
        const res = await ctx.clients.webhooks.createWebhook(req, ctx.call);
        sendJson(ctx.res, 201, createdWebhookToJson(res));
      },
    },
  },
  {
    pattern: "/api/v1/webhooks/:id",
    access: accessOf(
      WebhookService.method.getWebhook,
      WebhookService.method.updateWebhook,
      WebhookService.method.deleteWebhook,
    ),
    docs: {
      GET: { summary: "Get a webhook", status: 200, response: dataOf(WEBHOOK_JSON_SCHEMA) },
      PATCH: {
        summary: "Update a webhook (the fields sent are the update mask)",
        description: `${URL_RULE} \`secret\` rotates the signing secret; \`credits_below_usd: null\` stops credits.low.`,
        body: UPDATE_WEBHOOK_BODY_SCHEMA,
        status: 200,
        response: dataOf(WEBHOOK_JSON_SCHEMA),
      },
      DELETE: {
        summary: "Delete a webhook and its deliveries",
        status: 200,
        response: DELETED,
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.webhooks.getWebhook({ id: ctx.params.id ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.webhook && webhookToJson(res.webhook) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = updateWebhookRequestFromJson(ctx.params.id ?? "", body);
        const res = await ctx.clients.webhooks.updateWebhook(req, ctx.call);
        sendJson(ctx.res, 200, { data: res.webhook && webhookToJson(res.webhook) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.webhooks.deleteWebhook({ id: ctx.params.id ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
  {
    pattern: "/api/v1/webhooks/:id/deliveries",
    access: accessOf(WebhookService.method.listWebhookDeliveries),
    docs: {
      GET: {
        summary: "List a webhook's deliveries, newest first (cursor paging)",
        query: DELIVERIES_QUERY,
        queryRules: DELIVERIES_QUERY_RULES,
        status: 200,
        response: DELIVERY_PAGE_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = deliveriesRequestFromQuery(ctx.params.id ?? "", ctx.url.searchParams);
        const res = await ctx.clients.webhooks.listWebhookDeliveries(req, ctx.call);
        sendJson(ctx.res, 200, deliveryPageToJson(res));
      },
    },
  },
  {
    pattern: "/api/v1/webhooks/:id/test",
    access: accessOf(WebhookService.method.testWebhook),
    docs: {
      POST: {
        summary: "Send a webhook.test event to the webhook (answers its queued delivery)",
        status: 202,
        response: dataOf(DELIVERY_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const res = await ctx.clients.webhooks.testWebhook({ id: ctx.params.id ?? "" }, ctx.call);
        sendJson(ctx.res, 202, { data: res.delivery && deliveryToJson(res.delivery) });
      },
    },
  },
];
