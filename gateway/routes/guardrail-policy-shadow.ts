import { create } from "@bufbuild/protobuf";
import {
  GetGuardrailPolicyShadowResponseSchema,
  GuardrailPolicyService,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { POLICY_TYPES, type PolicyType } from "../../store/policies/types.js";
import type { Route } from "../context.js";
import { readJsonObject, readOptionalJsonObject, sendJson } from "../http-io.js";
import {
  ACCOUNT_SHADOW_BODY_SCHEMA,
  ACCOUNT_SHADOW_JSON_SCHEMA,
  ACCOUNT_SIMULATE_BODY_SCHEMA,
  accountShadowRequestFromJson,
  accountShadowStartedToJson,
  accountShadowToJson,
  accountSimulateRequestFromJson,
} from "../json/account-simulate-json.js";
import {
  ACCOUNT_POLICY_SCHEMA,
  accountPolicyToJson,
  POLICY_DETAIL_SCHEMA,
  policyDetailToJson,
} from "../json/guardrail-policy-json.js";
import { RESTORE_BODY, restoreForceOf } from "../json/guardrail-version-json.js";
import {
  POLICY_SHADOW_BODY_SCHEMA,
  POLICY_SIMULATE_BODY_SCHEMA,
  policyShadowRequestFromJson,
  policyShadowToJson,
  policySimulateRequestFromJson,
} from "../json/policy-shadow-json.js";
import { SHADOW_JSON_SCHEMA } from "../json/shadow-json.js";
import { SIMULATION_JSON_SCHEMA, simulationToJson } from "../json/simulation-json.js";
import { DELETED, dataOf, specSchema } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const M = GuardrailPolicyService.method;

/** What-if and shadow of one policy type, under the policy's path. */
function typeRoutes(type: PolicyType): Route[] {
  const base = `/api/v1/guardrails/policies/${type}/:id`;
  const label = type.replace("_", " ");
  return [
    {
      pattern: `${base}/simulate`,
      access: accessOf(M.simulateGuardrailPolicy),
      docs: {
        POST: {
          summary: `What a replace of a ${label} policy would have done: its requests replayed under it (nothing is written)`,
          description:
            "The change is the body a PUT takes and gets the PUT's 400s; the answer is the guardrail what-if's.",
          body: POLICY_SIMULATE_BODY_SCHEMA,
          status: 200,
          response: dataOf(SIMULATION_JSON_SCHEMA),
        },
      },
      methods: {
        async POST(ctx) {
          const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
          const { change, from, to } = policySimulateRequestFromJson(body, type);
          const res = await ctx.clients.policies.simulateGuardrailPolicy(
            { policyType: type, id: ctx.params.id ?? "", change, from, to },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: res.simulation && simulationToJson(res.simulation) });
        },
      },
    },
    {
      pattern: `${base}/shadow`,
      access: accessOf(
        M.startGuardrailPolicyShadow,
        M.getGuardrailPolicyShadow,
        M.endGuardrailPolicyShadow,
      ),
      docs: {
        POST: {
          summary: `Run a proposed replace beside the live ${label} policy until expires_at (no effect on answers)`,
          description:
            "The change is the body a PUT takes and gets the PUT's 400s; expires_at is at most 30 days ahead. A policy runs at most one shadow (409).",
          body: POLICY_SHADOW_BODY_SCHEMA,
          status: 201,
          response: dataOf(SHADOW_JSON_SCHEMA),
        },
        GET: {
          summary:
            "The shadow, and the requests it would have decided differently since it started",
          status: 200,
          response: dataOf(SHADOW_JSON_SCHEMA),
        },
        DELETE: { summary: "End the shadow", status: 200, response: DELETED },
      },
      methods: {
        async POST(ctx) {
          const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
          const { change, expiresAt } = policyShadowRequestFromJson(body, type);
          const res = await ctx.clients.policies.startGuardrailPolicyShadow(
            { policyType: type, id: ctx.params.id ?? "", change, expiresAt },
            ctx.call,
          );
          const answer = create(GetGuardrailPolicyShadowResponseSchema, { shadow: res.shadow });
          sendJson(ctx.res, 201, { data: policyShadowToJson(answer) });
        },
        async GET(ctx) {
          const res = await ctx.clients.policies.getGuardrailPolicyShadow(
            { policyType: type, id: ctx.params.id ?? "" },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: policyShadowToJson(res) });
        },
        async DELETE(ctx) {
          const res = await ctx.clients.policies.endGuardrailPolicyShadow(
            { policyType: type, id: ctx.params.id ?? "" },
            ctx.call,
          );
          sendJson(ctx.res, 200, { deleted: res.ended });
        },
      },
    },
    {
      pattern: `${base}/shadow/promote`,
      access: accessOf(M.promoteGuardrailPolicyShadow),
      docs: {
        POST: {
          summary:
            "Make the shadow's change the live policy (as its PUT: checks run as for one) and end the shadow",
          description: 'The body may be left out; `{ "force": true }` passes failing checks.',
          body: specSchema(RESTORE_BODY),
          status: 200,
          response: dataOf(POLICY_DETAIL_SCHEMA),
        },
      },
      methods: {
        async POST(ctx) {
          const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
          const res = await ctx.clients.policies.promoteGuardrailPolicyShadow(
            { policyType: type, id: ctx.params.id ?? "", force },
            ctx.call,
          );
          sendJson(ctx.res, 200, { data: res.policy && policyDetailToJson(res.policy) });
        },
      },
    },
  ];
}

/** What-if of a workspace-wide policy: its requests in every workspace it covers. */
const accountSimulateRoute: Route = {
  pattern: "/api/v1/guardrails/policies/account/:id/simulate",
  access: accessOf(M.simulateAccountPolicy),
  docs: {
    POST: {
      summary:
        "What a replace of a workspace-wide policy would have done: its requests in every workspace it covers replayed under it (nothing is written)",
      description:
        "The change is the body its PUT takes and gets the PUT's 400s; each covered workspace is replayed on its own (a budget counts each key and member per workspace, as enforcement does) and the answers are added up.",
      body: ACCOUNT_SIMULATE_BODY_SCHEMA,
      status: 200,
      response: dataOf(SIMULATION_JSON_SCHEMA),
    },
  },
  methods: {
    async POST(ctx) {
      const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
      const { change, from, to } = accountSimulateRequestFromJson(body);
      const res = await ctx.clients.policies.simulateAccountPolicy(
        { id: ctx.params.id ?? "", change, from, to },
        ctx.call,
      );
      sendJson(ctx.res, 200, { data: res.simulation && simulationToJson(res.simulation) });
    },
  },
};

/** Shadow of a workspace-wide policy: decided on the requests of every workspace it covers. */
const accountShadowRoutes: Route[] = [
  {
    pattern: "/api/v1/guardrails/policies/account/:id/shadow",
    access: accessOf(
      M.startAccountPolicyShadow,
      M.getAccountPolicyShadow,
      M.endAccountPolicyShadow,
    ),
    docs: {
      POST: {
        summary:
          "Run a proposed replace beside the live workspace-wide policy, in every workspace it covers, until expires_at (no effect on answers)",
        description:
          "The change is the body its PUT takes and gets the PUT's 400s; expires_at is at most 30 days ahead. A policy runs at most one shadow (409).",
        body: ACCOUNT_SHADOW_BODY_SCHEMA,
        status: 201,
        response: dataOf(ACCOUNT_SHADOW_JSON_SCHEMA),
      },
      GET: {
        summary:
          "The shadow, and the requests it would have decided differently since it started, added up over the workspaces it covers",
        status: 200,
        response: dataOf(ACCOUNT_SHADOW_JSON_SCHEMA),
      },
      DELETE: { summary: "End the shadow", status: 200, response: DELETED },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const { change, expiresAt } = accountShadowRequestFromJson(body);
        const res = await ctx.clients.policies.startAccountPolicyShadow(
          { id: ctx.params.id ?? "", change, expiresAt },
          ctx.call,
        );
        sendJson(ctx.res, 201, { data: accountShadowStartedToJson(res) });
      },
      async GET(ctx) {
        const res = await ctx.clients.policies.getAccountPolicyShadow(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: accountShadowToJson(res) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.policies.endAccountPolicyShadow(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.ended });
      },
    },
  },
  {
    pattern: "/api/v1/guardrails/policies/account/:id/shadow/promote",
    access: accessOf(M.promoteAccountPolicyShadow),
    docs: {
      POST: {
        summary:
          "Make the shadow's change the live workspace-wide policy (as its PUT: checks run as for one) and end the shadow",
        description: 'The body may be left out; `{ "force": true }` passes failing checks.',
        body: specSchema(RESTORE_BODY),
        status: 200,
        response: dataOf(ACCOUNT_POLICY_SCHEMA),
      },
    },
    methods: {
      async POST(ctx) {
        const force = restoreForceOf(await readOptionalJsonObject(ctx.req, ctx.maxBodyBytes));
        const res = await ctx.clients.policies.promoteAccountPolicyShadow(
          { id: ctx.params.id ?? "", force },
          ctx.call,
        );
        sendJson(ctx.res, 200, { data: res.policy && accountPolicyToJson(res.policy) });
      },
    },
  },
];

export const guardrailPolicyShadowRoutes: Route[] = [
  accountSimulateRoute,
  ...accountShadowRoutes,
  ...POLICY_TYPES.flatMap(typeRoutes),
];
