import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import {
  CREATE_KEY_BODY_SCHEMA,
  CREATED_KEY_JSON_SCHEMA,
  CURRENT_KEY_JSON_SCHEMA,
  createdKeyToJson,
  createKeyRequestFromJson,
  currentKeyToJson,
  KEY_JSON_SCHEMA,
  KEY_LIST_QUERY,
  keysToJson,
  keyToJson,
  listKeysRequestFromQuery,
  UPDATE_KEY_BODY_SCHEMA,
  updateKeyRequestFromJson,
} from "../json/key-json.js";
import { DELETED, dataOf, pageOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

export const keyRoutes: Route[] = [
  {
    pattern: "/api/v1/keys",
    access: accessOf(AccountService.method.listKeys, AccountService.method.createKey),
    docs: {
      GET: {
        summary: "List API keys",
        query: KEY_LIST_QUERY,
        queryRules: {
          q: {
            type: "string",
            maxLength: ACCOUNT_LIMITS.searchMax,
            description:
              "Keys whose name or label contains this, or whose hash starts with it (any case); total_count counts the matches",
          },
        },
        status: 200,
        response: pageOf(KEY_JSON_SCHEMA),
      },
      POST: {
        summary: "Create an API key (the secret is in the answer, once)",
        body: CREATE_KEY_BODY_SCHEMA,
        status: 201,
        response: CREATED_KEY_JSON_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        const req = listKeysRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.accounts.listKeys(req, ctx.call);
        sendJson(ctx.res, 200, { data: keysToJson(res), total_count: res.totalCount });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const res = await ctx.clients.accounts.createKey(createKeyRequestFromJson(body), ctx.call);
        sendJson(ctx.res, 201, createdKeyToJson(res));
      },
    },
  },
  {
    pattern: "/api/v1/keys/:hash",
    access: accessOf(
      AccountService.method.getKey,
      AccountService.method.updateKey,
      AccountService.method.deleteKey,
    ),
    docs: {
      GET: {
        summary: "Get an API key by its hash",
        status: 200,
        response: dataOf(KEY_JSON_SCHEMA),
      },
      PATCH: {
        summary: "Update an API key",
        body: UPDATE_KEY_BODY_SCHEMA,
        status: 200,
        response: dataOf(KEY_JSON_SCHEMA),
      },
      DELETE: { summary: "Delete an API key", status: 200, response: DELETED },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getKey({ hash: ctx.params.hash ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key, res.usage) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = updateKeyRequestFromJson(ctx.params.hash ?? "", body);
        const res = await ctx.clients.accounts.updateKey(req, ctx.call);
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key, res.usage) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.accounts.deleteKey({ hash: ctx.params.hash ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
  {
    // Any valid key may ask about itself.
    pattern: "/api/v1/key",
    access: accessOf(AccountService.method.getCurrentKey),
    docs: {
      GET: {
        summary: "The calling key: its limits and usage",
        status: 200,
        response: dataOf(CURRENT_KEY_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getCurrentKey({}, ctx.call);
        sendJson(ctx.res, 200, { data: currentKeyToJson(res) });
      },
    },
  },
];
