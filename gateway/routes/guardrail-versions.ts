import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { Route } from "../context.js";
import { readOptionalJsonObject, sendJson, sendJsonText } from "../http-io.js";
import { checkFields, checkQuery, queryPage } from "../json/fields.js";
import {
  CHECK_RUN_JSON_SCHEMA,
  checkRunToJson,
  GUARDRAIL_JSON_SCHEMA,
  guardrailAnswerText,
} from "../json/guardrail-json.js";
import {
  GUARDRAIL_VERSION_SCHEMA,
  GUARDRAIL_VERSION_WITH_GUARDRAIL_SCHEMA,
  guardrailVersionToJson,
  guardrailVersionWithGuardrailToJson,
  RESTORE_BODY,
  restoreForceOf,
  versionOfPath,
} from "../json/guardrail-version-json.js";
import { dataOf, pageOf, specSchema } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const PAGE_QUERY = ["offset", "limit"] as const;

/** The history of a guardrail (each change a numbered version), restore, and its checks. */
export const guardrailVersionRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails/:id/versions",
    access: accessOf(GuardrailService.method.listGuardrailVersions),
    docs: {
      GET: {
        summary: "List a guardrail's versions, newest first",
        description:
          "Every create, update and restore is a version. A deleted guardrail's versions stay readable for the audit log's retention.",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(GUARDRAIL_VERSION_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, PAGE_QUERY);
        const res = await ctx.clients.guardrails.listGuardrailVersions(
          { guardrailId: ctx.params.id ?? "", ...queryPage(ctx.url.searchParams) },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.versions.map(guardrailVersionToJson),
          total_count: res.totalCount,
        });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/versions/:n",
    access: accessOf(GuardrailService.method.getGuardrailVersion),
    docs: {
      GET: {
        summary: "Get one version of a guardrail, with the guardrail as it left it",
        status: 200,
        response: dataOf(GUARDRAIL_VERSION_WITH_GUARDRAIL_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.guardrails.getGuardrailVersion(
          { guardrailId: ctx.params.id ?? "", version: versionOfPath(ctx.params.n) },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.version ? guardrailVersionWithGuardrailToJson(res.version) : null,
        });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/versions/:n/restore",
    access: accessOf(GuardrailService.method.restoreGuardrailVersion),
    docs: {
      POST: {
        summary: "Restore a version: a new version equal to it",
        description:
          "The restored version's checks run first: a failing one refuses the restore (409) unless the body says force: true. The body may be left out.",
        body: specSchema(RESTORE_BODY),
        status: 200,
        response: dataOf(GUARDRAIL_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
        const res = await ctx.clients.guardrails.restoreGuardrailVersion(
          { guardrailId: ctx.params.id ?? "", version: versionOfPath(ctx.params.n), force },
          ctx.call,
        );
        sendJsonText(ctx.res, 200, guardrailAnswerText(res.guardrail));
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/:id/checks/run",
    access: accessOf(GuardrailService.method.runGuardrailChecks),
    docs: {
      POST: {
        summary: "Run a guardrail's checks now; the result is kept as its last_check_run",
        status: 200,
        response: dataOf(CHECK_RUN_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        checkFields(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes), {});
        const res = await ctx.clients.guardrails.runGuardrailChecks(
          { guardrailId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.run ? checkRunToJson(res.run) : null });
      },
    },
  },
];
