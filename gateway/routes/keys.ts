import { type ApiKey, KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { badRequest, checkFields, checkQuery, has, queryPage } from "../json/fields.js";
import { isoOrNull } from "../json/guardrail-json.js";

export function keyToJson(k: ApiKey) {
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    kind: k.kind === KeyKind.MANAGEMENT ? "management" : "standard",
    workspace_id: k.workspaceId || null,
    member_user_id: k.memberUserId || null,
    disabled: k.disabled,
    limit: k.limit ?? null,
    rate_limit_per_minute: k.rateLimitPerMinute ?? null,
    guardrail_id: k.guardrailId || null,
    created_at: isoOrNull(k.createdAt),
    updated_at: isoOrNull(k.updatedAt),
  };
}

function parseKind(v: unknown): KeyKind {
  if (v === undefined || v === "standard") return KeyKind.STANDARD;
  if (v === "management") return KeyKind.MANAGEMENT;
  throw badRequest(`kind must be "standard" or "management", got "${String(v).slice(0, 32)}"`);
}

export const keyRoutes: Route[] = [
  {
    pattern: "/api/v1/keys",
    access: "management",
    methods: {
      async GET(ctx) {
        const q = ctx.url.searchParams;
        checkQuery(q, ["offset", "limit", "workspace_id", "include_disabled"]);
        const res = await ctx.clients.accounts.listKeys(
          {
            ...queryPage(q),
            workspaceId: q.get("workspace_id") ?? undefined,
            includeDisabled: q.get("include_disabled") === "true",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.keys.map(keyToJson), total_count: res.totalCount });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, {
          name: { type: "string" },
          kind: { type: "string" },
          workspace_id: { type: "string" },
          member_user_id: { type: "string", nullable: true },
          limit: { type: "number", nullable: true },
          rate_limit_per_minute: { type: "int32", nullable: true },
        });
        if (!has(body, "name")) throw badRequest("name is required");
        const res = await ctx.clients.accounts.createKey(
          {
            name: body.name as string,
            kind: parseKind(body.kind),
            workspaceId: (body.workspace_id as string | undefined) ?? "",
            memberUserId: (body.member_user_id as string | null | undefined) ?? "",
            limit: (body.limit as number | null | undefined) ?? undefined,
            rateLimitPerMinute:
              (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
          },
          ctx.call,
        );
        sendJson(ctx.res, 201, { data: res.key && keyToJson(res.key), key: res.secret });
      },
    },
  },
  {
    pattern: "/api/v1/keys/:hash",
    access: "management",
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getKey({ hash: ctx.params.hash ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        checkFields(body, {
          name: { type: "string" },
          disabled: { type: "boolean" },
          limit: { type: "number", nullable: true },
          rate_limit_per_minute: { type: "int32", nullable: true },
        });
        const paths = Object.keys(body);
        if (paths.length === 0)
          throw badRequest("Update body is empty: send name, disabled or limit");
        const res = await ctx.clients.accounts.updateKey(
          {
            hash: ctx.params.hash ?? "",
            name: body.name as string | undefined,
            disabled: body.disabled as boolean | undefined,
            limit: (body.limit as number | null | undefined) ?? undefined,
            rateLimitPerMinute:
              (body.rate_limit_per_minute as number | null | undefined) ?? undefined,
            updateMask: { paths },
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.key && keyToJson(res.key) });
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
    access: "any-key",
    methods: {
      async GET(ctx) {
        sendJson(ctx.res, 200, { data: ctx.key && keyToJson(ctx.key) });
      },
    },
  },
];
