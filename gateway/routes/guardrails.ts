import { UUID_INPUT_PATTERN } from "../../domain/ids.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson, sendJsonText } from "../http-io.js";
import { checkQuery, queryPage } from "../json/fields.js";
import {
  GUARDRAIL_JSON_SCHEMA,
  guardrailAnswerText,
  guardrailBodySchema,
  guardrailInputFromJson,
  guardrailPatchBodySchema,
  guardrailPatchFromJson,
  guardrailToJson,
} from "../json/guardrail-json.js";
import {
  SIMULATE_BODY_SCHEMA,
  SIMULATION_JSON_SCHEMA,
  simulateRequestFromJson,
  simulationToJson,
} from "../json/simulation-json.js";
import { DELETED, dataOf, pageOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const LIST_QUERY = ["offset", "limit", "workspace_id"] as const;

export const guardrailRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails",
    access: accessOf(
      GuardrailService.method.listGuardrails,
      GuardrailService.method.createGuardrail,
    ),
    docs: {
      GET: {
        summary: "List guardrails",
        query: LIST_QUERY,
        queryRules: { workspace_id: { type: "string", pattern: UUID_INPUT_PATTERN } },
        status: 200,
        response: pageOf(GUARDRAIL_JSON_SCHEMA),
      },
      POST: {
        summary: "Create a guardrail",
        body: guardrailBodySchema(["name"]),
        status: 201,
        response: dataOf(GUARDRAIL_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, LIST_QUERY);
        const res = await ctx.clients.guardrails.listGuardrails(
          {
            ...queryPage(ctx.url.searchParams),
            workspaceId: ctx.url.searchParams.get("workspace_id") ?? undefined,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.guardrails.map(guardrailToJson),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const { input } = guardrailInputFromJson(body);
        const res = await ctx.clients.guardrails.createGuardrail({ guardrail: input }, ctx.call);
        sendJson(ctx.res, 201, { data: res.guardrail && guardrailToJson(res.guardrail) });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id",
    access: accessOf(
      GuardrailService.method.getGuardrail,
      GuardrailService.method.updateGuardrail,
      GuardrailService.method.deleteGuardrail,
    ),
    docs: {
      GET: { summary: "Get a guardrail", status: 200, response: dataOf(GUARDRAIL_JSON_SCHEMA) },
      PATCH: {
        summary: "Update a guardrail (the fields sent are the update mask)",
        description:
          "The guardrail's checks run against the result first: a failing one refuses the change (409, error.metadata.failing_checks) unless the body also says force: true, which the audit log records.",
        body: guardrailPatchBodySchema(),
        status: 200,
        response: dataOf(GUARDRAIL_JSON_SCHEMA),
      },
      DELETE: { summary: "Delete a guardrail", status: 200, response: DELETED },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.guardrails.getGuardrail(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJsonText(ctx.res, 200, guardrailAnswerText(res.guardrail));
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        // The keys present are the mask; an empty one is the service's to refuse.
        const { input, paths, force } = guardrailPatchFromJson(body);
        const res = await ctx.clients.guardrails.updateGuardrail(
          {
            id: ctx.params.id ?? "",
            guardrail: input,
            updateMask: { paths },
            force,
          },
          ctx.call,
        );
        sendJsonText(ctx.res, 200, guardrailAnswerText(res.guardrail));
      },
      async DELETE(ctx) {
        const res = await ctx.clients.guardrails.deleteGuardrail(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/simulate",
    access: accessOf(GuardrailService.method.simulateGuardrail),
    docs: {
      POST: {
        summary:
          "What a change would have done: replay the requests the guardrail governed under it (nothing is written)",
        body: SIMULATE_BODY_SCHEMA,
        status: 200,
        response: dataOf(SIMULATION_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const { change, paths, from, to } = simulateRequestFromJson(body);
        const res = await ctx.clients.guardrails.simulateGuardrail(
          { id: ctx.params.id ?? "", change, updateMask: { paths }, from, to },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: simulationToJson(res) });
      },
    },
  },
];
