import {
  GuardrailPolicyService,
  type GuardrailPolicyVersion,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { POLICY_TYPES, type PolicyType } from "../../store/policies/types.js";
import type { Route } from "../context.js";
import { readOptionalJsonObject, sendJson } from "../http-io.js";
import { checkFields, checkQuery, queryPage } from "../json/fields.js";
import { CHECK_RUN_JSON_SCHEMA, checkRunToJson } from "../json/guardrail-json.js";
import {
  ACCOUNT_POLICY_SCHEMA,
  accountPolicyToJson,
  POLICY_DETAIL_SCHEMA,
  policyDetailToJson,
} from "../json/guardrail-policy-json.js";
import { RESTORE_BODY, restoreForceOf, versionOfPath } from "../json/guardrail-version-json.js";
import {
  POLICY_VERSION_PROPERTIES,
  POLICY_VERSION_SCHEMA,
  policyVersionToJson,
} from "../json/policy-checks-json.js";
import { dataOf, orNull, pageOf, shapeOf, specSchema } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const M = GuardrailPolicyService.method;
const PAGE_QUERY = ["offset", "limit"] as const;

function versionWithPolicyToJson(v: GuardrailPolicyVersion) {
  return { ...policyVersionToJson(v), policy: v.policy ? policyDetailToJson(v.policy) : null };
}

const VERSION_WITH_POLICY_SCHEMA = shapeOf<ReturnType<typeof versionWithPolicyToJson>>({
  ...POLICY_VERSION_PROPERTIES,
  policy: orNull(POLICY_DETAIL_SCHEMA),
});

function accountVersionToJson(v: GuardrailPolicyVersion) {
  return {
    ...policyVersionToJson(v),
    policy: v.accountPolicy ? accountPolicyToJson(v.accountPolicy) : null,
  };
}

const ACCOUNT_VERSION_SCHEMA = shapeOf<ReturnType<typeof accountVersionToJson>>({
  ...POLICY_VERSION_PROPERTIES,
  policy: orNull(ACCOUNT_POLICY_SCHEMA),
});

const MAPPED =
  "A policy mapped from a guardrail (is_legacy_mapped) has the guardrail's versions and checks: 400 naming the guardrail's routes.";

/** The history of one type's policies (each create, replace and restore a version), restore, and checks. */
function typeRoutes(type: PolicyType): Route[] {
  const base = `/api/v1/guardrails/policies/${type}/:id`;
  const ids = (ctx: { params: Record<string, string | undefined> }) => ({
    policyType: type,
    policyId: ctx.params.id ?? "",
  });
  return [
    {
      pattern: `${base}/versions`,
      access: accessOf(M.listGuardrailPolicyVersions),
      docs: {
        GET: {
          summary: `List a ${type} policy's versions, newest first`,
          description: `Every create, replace and restore is a version; assignment changes are not (they are in the audit log). A deleted policy's versions stay readable for the audit log's retention. ${MAPPED}`,
          query: PAGE_QUERY,
          status: 200,
          response: pageOf(POLICY_VERSION_SCHEMA),
        },
      },
      methods: {
        async GET(ctx) {
          checkQuery(ctx.url.searchParams, PAGE_QUERY);
          const res = await ctx.clients.policies.listGuardrailPolicyVersions(
            { ...ids(ctx), ...queryPage(ctx.url.searchParams) },
            ctx.call,
          );
          sendJson(ctx.res, 200, {
            data: res.versions.map(policyVersionToJson),
            total_count: res.totalCount,
          });
        },
      },
    },
    {
      pattern: `${base}/versions/:n`,
      access: accessOf(M.getGuardrailPolicyVersion),
      docs: {
        GET: {
          summary: `Get one version of a ${type} policy, with the policy as it left it`,
          status: 200,
          response: dataOf(VERSION_WITH_POLICY_SCHEMA),
        },
      },
      methods: {
        async GET(ctx) {
          const res = await ctx.clients.policies.getGuardrailPolicyVersion(
            { ...ids(ctx), version: versionOfPath(ctx.params.n) },
            ctx.call,
          );
          sendJson(ctx.res, 200, {
            data: res.version ? versionWithPolicyToJson(res.version) : null,
          });
        },
      },
    },
    {
      pattern: `${base}/versions/:n/restore`,
      access: accessOf(M.restoreGuardrailPolicyVersion),
      docs: {
        POST: {
          summary: `Restore a version of a ${type} policy: a new version with its name, config and checks`,
          description: `Assignments stay as they are. The restored checks run first: a failing one refuses the restore (409) unless the body says force: true. The body may be left out. ${MAPPED}`,
          body: specSchema(RESTORE_BODY),
          status: 200,
          response: dataOf(POLICY_DETAIL_SCHEMA),
        },
      },
      methods: {
        async POST(ctx) {
          const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
          const res = await ctx.clients.policies.restoreGuardrailPolicyVersion(
            { ...ids(ctx), version: versionOfPath(ctx.params.n), force },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: res.policy ? policyDetailToJson(res.policy) : null });
        },
      },
    },
    // A budget policy takes no checks (an example request has no spend): no route to run them.
    ...(type === "budget" ? [] : [checksRoute(type, base, ids)]),
  ];
}

function checksRoute(
  type: PolicyType,
  base: string,
  ids: (ctx: { params: Record<string, string | undefined> }) => {
    policyType: string;
    policyId: string;
  },
): Route {
  return {
    pattern: `${base}/checks/run`,
    access: accessOf(M.runGuardrailPolicyChecks),
    docs: {
      POST: {
        summary: `Run a ${type} policy's checks now; the result is kept as its last_check_run`,
        description: MAPPED,
        status: 200,
        response: dataOf(CHECK_RUN_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        checkFields(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes), {});
        const res = await ctx.clients.policies.runGuardrailPolicyChecks(ids(ctx), ctx.call);
        sendJson(ctx.res, 200, { data: res.run ? checkRunToJson(res.run) : null });
      },
    },
  };
}

const ACCOUNT_BASE = "/api/v1/guardrails/policies/account/:id";

/** A workspace-wide policy's history, restore and checks, as a workspace policy's (the type is the policy's). */
const accountRoutes: Route[] = [
  {
    pattern: `${ACCOUNT_BASE}/versions`,
    access: accessOf(M.listAccountPolicyVersions),
    docs: {
      GET: {
        summary: "List a workspace-wide policy's versions, newest first",
        description:
          "Every create, replace and restore is a version. A deleted policy's versions stay readable for the audit log's retention.",
        query: PAGE_QUERY,
        status: 200,
        response: pageOf(POLICY_VERSION_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, PAGE_QUERY);
        const res = await ctx.clients.policies.listAccountPolicyVersions(
          { policyId: ctx.params.id ?? "", ...queryPage(ctx.url.searchParams) },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.versions.map(policyVersionToJson),
          total_count: res.totalCount,
        });
      },
    },
  },
  {
    pattern: `${ACCOUNT_BASE}/versions/:n`,
    access: accessOf(M.getAccountPolicyVersion),
    docs: {
      GET: {
        summary: "Get one version of a workspace-wide policy, with the policy as it left it",
        status: 200,
        response: dataOf(ACCOUNT_VERSION_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.policies.getAccountPolicyVersion(
          { policyId: ctx.params.id ?? "", version: versionOfPath(ctx.params.n) },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.version ? accountVersionToJson(res.version) : null });
      },
    },
  },
  {
    pattern: `${ACCOUNT_BASE}/versions/:n/restore`,
    access: accessOf(M.restoreAccountPolicyVersion),
    docs: {
      POST: {
        summary:
          "Restore a version of a workspace-wide policy: a new version with its name, config and checks",
        description:
          "The workspaces it covers stay as they are. The restored checks run first: a failing one refuses the restore (409) unless the body says force: true. The body may be left out.",
        body: specSchema(RESTORE_BODY),
        status: 200,
        response: dataOf(ACCOUNT_POLICY_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
        const res = await ctx.clients.policies.restoreAccountPolicyVersion(
          { policyId: ctx.params.id ?? "", version: versionOfPath(ctx.params.n), force },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.policy ? accountPolicyToJson(res.policy) : null });
      },
    },
  },
  {
    pattern: `${ACCOUNT_BASE}/checks/run`,
    access: accessOf(M.runAccountPolicyChecks),
    docs: {
      POST: {
        summary:
          "Run a workspace-wide policy's checks now; the result is kept as its last_check_run",
        description:
          "A budget policy takes no checks (an example request has no spend): 400 for one.",
        status: 200,
        response: dataOf(CHECK_RUN_JSON_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        checkFields(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes), {});
        const res = await ctx.clients.policies.runAccountPolicyChecks(
          { policyId: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.run ? checkRunToJson(res.run) : null });
      },
    },
  },
];

export const guardrailPolicyVersionRoutes: Route[] = [
  ...accountRoutes,
  ...POLICY_TYPES.flatMap(typeRoutes),
];
