import { UUID_INPUT_PATTERN } from "../../domain/ids.js";
import { GuardrailPolicyService } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { POLICY_TYPES, type PolicyType } from "../../store/policies/types.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { checkQuery, queryPage } from "../json/fields.js";
import {
  ACCOUNT_POLICY_SCHEMA,
  ASSIGNMENT_QUERY,
  ASSIGNMENT_QUERY_RULES,
  ASSIGNMENT_STATE_SCHEMA,
  accountPolicyInputFromJson,
  accountPolicyToJson,
  assignmentStateToJson,
  CHANGE_ASSIGNMENT_BODY_SCHEMA,
  CHANGED_SCHEMA,
  CREATE_ACCOUNT_POLICY_BODY_SCHEMA,
  CREATE_POLICY_BODY_SCHEMA,
  changeAssignmentFromJson,
  POLICY_DETAIL_SCHEMA,
  POLICY_SUMMARY_SCHEMA,
  policyDetailToJson,
  policyInputFromJson,
  policySummaryToJson,
  UPDATE_ACCOUNT_POLICY_BODY_SCHEMA,
  UPDATE_POLICY_BODY_SCHEMA,
} from "../json/guardrail-policy-json.js";
import { forceOf } from "../json/policy-checks-json.js";
import { DELETED, dataOf, pageOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const M = GuardrailPolicyService.method;
const LIST_QUERY = ["offset", "limit", "workspace_id"] as const;

const LABEL: Record<PolicyType, string> = {
  budget: "budget",
  model_availability: "model availability",
  moderation: "moderation",
};

/** The routes of one policy type: OpenRouter gives each type its own paths. */
function typeRoutes(type: PolicyType): Route[] {
  const label = LABEL[type];
  return [
    {
      pattern: `/api/v1/guardrails/policies/${type}`,
      access: accessOf(M.listGuardrailPolicies, M.createGuardrailPolicy),
      docs: {
        GET: {
          summary: `List ${label} policies`,
          query: LIST_QUERY,
          queryRules: { workspace_id: { type: "string", pattern: UUID_INPUT_PATTERN } },
          status: 200,
          response: pageOf(POLICY_SUMMARY_SCHEMA),
        },
        POST: {
          summary: `Create a ${label} policy`,
          body: CREATE_POLICY_BODY_SCHEMA,
          status: 201,
          response: dataOf(POLICY_DETAIL_SCHEMA),
        },
      },
      methods: {
        async GET(ctx) {
          checkQuery(ctx.url.searchParams, LIST_QUERY);
          const res = await ctx.clients.policies.listGuardrailPolicies(
            {
              policyType: type,
              ...queryPage(ctx.url.searchParams),
              workspaceId: ctx.url.searchParams.get("workspace_id") ?? undefined,
            },
            ctx.call,
          );
          sendJson(ctx.res, 200, {
            data: res.policies.map(policySummaryToJson),
            total_count: res.totalCount,
          });
        },
        async POST(ctx) {
          const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
          const policy = policyInputFromJson(body, type, "create");
          const res = await ctx.clients.policies.createGuardrailPolicy({ policy }, ctx.call);
          sendJson(ctx.res, 201, { data: res.policy && policyDetailToJson(res.policy) });
        },
      },
    },
    {
      pattern: `/api/v1/guardrails/policies/${type}/:id`,
      access: accessOf(M.getGuardrailPolicy, M.updateGuardrailPolicy, M.deleteGuardrailPolicy),
      docs: {
        GET: {
          summary: `Get a ${label} policy with its assignments`,
          status: 200,
          response: dataOf(POLICY_DETAIL_SCHEMA),
        },
        PUT: {
          summary: `Replace a ${label} policy (omitted assignment lists and checks keep the stored ones)`,
          description:
            "The policy's checks run on the policy the change leaves: a failing one refuses it (409) unless the body says force: true. Every replace is a new version.",
          body: UPDATE_POLICY_BODY_SCHEMA,
          status: 200,
          response: dataOf(POLICY_DETAIL_SCHEMA),
        },
        DELETE: { summary: `Delete a ${label} policy`, status: 200, response: DELETED },
      },
      methods: {
        async GET(ctx) {
          const res = await ctx.clients.policies.getGuardrailPolicy(
            { policyType: type, id: ctx.params.id ?? "" },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: res.policy && policyDetailToJson(res.policy) });
        },
        async PUT(ctx) {
          const { force, fields } = forceOf(await readJsonObject(ctx.req, ctx.maxBodyBytes));
          const policy = policyInputFromJson(fields, type, "update");
          const res = await ctx.clients.policies.updateGuardrailPolicy(
            { id: ctx.params.id ?? "", policy, force },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: res.policy && policyDetailToJson(res.policy) });
        },
        async DELETE(ctx) {
          const res = await ctx.clients.policies.deleteGuardrailPolicy(
            { policyType: type, id: ctx.params.id ?? "" },
            ctx.call,
          );
          sendJson(ctx.res, 200, { deleted: res.deleted });
        },
      },
    },
  ];
}

/** The assignment routes of one kind of subject (an API key by hash, or a member by user id). */
function assignmentRoute(kind: "api_key" | "member"): Route {
  const segment = kind === "api_key" ? "api-keys" : "members";
  const noun = kind === "api_key" ? "an API key" : "a member";
  return {
    pattern: `/api/v1/guardrails/policies/assignments/${segment}/:subject`,
    access: accessOf(M.getPolicyAssignment, M.changePolicyAssignment),
    docs: {
      GET: {
        summary: `Get the policies of one type that apply to ${noun} in a workspace`,
        query: ASSIGNMENT_QUERY,
        queryRules: ASSIGNMENT_QUERY_RULES,
        status: 200,
        response: dataOf(ASSIGNMENT_STATE_SCHEMA),
      },
      PUT: {
        summary: `Assign or unassign one policy for ${noun} (409 when expected_assignment is stale)`,
        body: CHANGE_ASSIGNMENT_BODY_SCHEMA,
        status: 200,
        response: CHANGED_SCHEMA,
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, ASSIGNMENT_QUERY);
        const res = await ctx.clients.policies.getPolicyAssignment(
          {
            subjectKind: kind,
            subject: ctx.params.subject ?? "",
            workspaceId: ctx.url.searchParams.get("workspace_id") ?? "",
            policyType: ctx.url.searchParams.get("policy_type") ?? "",
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: assignmentStateToJson(res.state) });
      },
      async PUT(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = changeAssignmentFromJson(body, kind, ctx.params.subject ?? "");
        const res = await ctx.clients.policies.changePolicyAssignment(req, ctx.call);
        sendJson(ctx.res, 200, { data: res.changed });
      },
    },
  };
}

const ACCOUNT_LIST_QUERY = ["offset", "limit", "policy_type"] as const;

/** Workspace-wide policies: one list for every type, and one path per policy. */
const accountRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails/policies/account",
    access: accessOf(M.listAccountPolicies, M.createAccountPolicy),
    docs: {
      GET: {
        summary: "List the workspace-wide policies of the account",
        query: ACCOUNT_LIST_QUERY,
        queryRules: { policy_type: { type: "string", enum: [...POLICY_TYPES] } },
        status: 200,
        response: pageOf(ACCOUNT_POLICY_SCHEMA),
      },
      POST: {
        summary: "Create a workspace-wide budget, model availability or moderation policy",
        body: CREATE_ACCOUNT_POLICY_BODY_SCHEMA,
        status: 201,
        response: dataOf(ACCOUNT_POLICY_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, ACCOUNT_LIST_QUERY);
        const res = await ctx.clients.policies.listAccountPolicies(
          {
            ...queryPage(ctx.url.searchParams),
            policyType: ctx.url.searchParams.get("policy_type") ?? undefined,
          },
          ctx.call,
        );
        sendJson(ctx.res, 200, {
          data: res.policies.map(accountPolicyToJson),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const policy = accountPolicyInputFromJson(body, "create");
        const res = await ctx.clients.policies.createAccountPolicy({ policy }, ctx.call);
        sendJson(ctx.res, 201, { data: res.policy && accountPolicyToJson(res.policy) });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/policies/account/:id",
    access: accessOf(M.updateAccountPolicy, M.deleteAccountPolicy),
    docs: {
      PUT: {
        summary: "Replace a workspace-wide policy and its workspace coverage",
        description:
          "The policy's checks run on the policy the change leaves: a failing one refuses it (409) unless the body says force: true. Every replace is a new version.",
        body: UPDATE_ACCOUNT_POLICY_BODY_SCHEMA,
        status: 200,
        response: dataOf(ACCOUNT_POLICY_SCHEMA),
      },
      DELETE: { summary: "Delete a workspace-wide policy", status: 200, response: DELETED },
    },
    methods: {
      async PUT(ctx) {
        const { force, fields } = forceOf(await readJsonObject(ctx.req, ctx.maxBodyBytes));
        const policy = accountPolicyInputFromJson(fields, "update");
        const res = await ctx.clients.policies.updateAccountPolicy(
          { id: ctx.params.id ?? "", policy, force },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.policy && accountPolicyToJson(res.policy) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.policies.deleteAccountPolicy(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
];

export const guardrailPolicyRoutes: Route[] = [
  ...accountRoutes,
  assignmentRoute("api_key"),
  assignmentRoute("member"),
  ...POLICY_TYPES.flatMap(typeRoutes),
];
