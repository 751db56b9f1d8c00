import { create } from "@bufbuild/protobuf";
import {
  GetGuardrailShadowResponseSchema,
  GuardrailService,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, readOptionalJsonObject, sendJson, sendJsonText } from "../http-io.js";
import { GUARDRAIL_JSON_SCHEMA, guardrailAnswerText } from "../json/guardrail-json.js";
import { RESTORE_BODY, restoreForceOf } from "../json/guardrail-version-json.js";
import {
  SHADOW_BODY_SCHEMA,
  SHADOW_JSON_SCHEMA,
  shadowRequestFromJson,
  shadowToJson,
} from "../json/shadow-json.js";
import { DELETED, dataOf, specSchema } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

/** A proposed change run beside the live guardrail: start, report, promote, end. */
export const guardrailShadowRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails/:id/shadow",
    access: accessOf(
      GuardrailService.method.startGuardrailShadow,
      GuardrailService.method.getGuardrailShadow,
      GuardrailService.method.endGuardrailShadow,
    ),
    docs: {
      POST: {
        summary:
          "Run a proposed change beside the live guardrail until expires_at (no effect on answers)",
        description:
          "The change is the body a PATCH takes and gets the PATCH's 400s; expires_at is at most 30 days ahead. A guardrail runs at most one shadow (409).",
        body: SHADOW_BODY_SCHEMA,
        status: 201,
        response: dataOf(SHADOW_JSON_SCHEMA),
      },
      GET: {
        summary: "The shadow, and the requests it would have decided differently since it started",
        status: 200,
        response: dataOf(SHADOW_JSON_SCHEMA),
      },
      DELETE: { summary: "End the shadow", status: 200, response: DELETED },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const { change, paths, expiresAt } = shadowRequestFromJson(body);
        const res = await ctx.clients.guardrails.startGuardrailShadow(
          { guardrailId: ctx.params.id ?? "", change, updateMask: { paths }, expiresAt },
          ctx.call,
        );
        const answer = create(GetGuardrailShadowResponseSchema, { shadow: res.shadow });
        sendJson(ctx.res, 201, { data: shadowToJson(answer) });
      },
      async GET(ctx) {
        const res = await ctx.clients.guardrails.getGuardrailShadow(
          { guardrailId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: shadowToJson(res) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.guardrails.endGuardrailShadow(
          { guardrailId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.ended });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/shadow/promote",
    access: accessOf(GuardrailService.method.promoteGuardrailShadow),
    docs: {
      POST: {
        summary:
          "Make the shadow's change the live version (checks run as for a PATCH) and end the shadow",
        description: 'The body may be left out; `{ "force": true }` passes failing checks.',
        body: specSchema(RESTORE_BODY),
        status: 200,
        response: dataOf(GUARDRAIL_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
        const res = await ctx.clients.guardrails.promoteGuardrailShadow(
          { guardrailId: ctx.params.id ?? "", force },
          ctx.call,
        );
        sendJsonText(ctx.res, 200, guardrailAnswerText(res.guardrail));
      },
    },
  },
];
