import { queryPage } from "../../../gateway/json/fields.js";
import {
  accountPolicyInputFromJson,
  accountPolicyToJson,
  assignmentStateToJson,
  changeAssignmentFromJson,
  policyDetailToJson,
  policyInputFromJson,
  policySummaryToJson,
} from "../../../gateway/json/guardrail-policy-json.js";
import { forceOf } from "../../../gateway/json/policy-checks-json.js";
import { POLICY_TYPES, type PolicyType } from "../../../store/policies/types.js";
import type { Command } from "../command.js";
import { type GrpcOperation, grpcCommands } from "../http/api-command.js";
import { POLICY_SPECS } from "../http/resources/policies.js";

const BASE = "/api/v1/guardrails/policies";

/**
 * The policy routes of the gateway (gateway/routes/guardrail-policies.ts) as the CLI's gRPC
 * transport makes them: the same JSON parsing, RPC and JSON answer per route, keyed by the
 * route as the HTTP commands name it, so `--grpc` prints what the HTTP commands print.
 */
function typeOperations(type: PolicyType): [string, GrpcOperation][] {
  const base = `${BASE}/${type}`;
  return [
    [
      `GET ${base}`,
      async ({ policies }, { query }) => {
        const res = await policies.listGuardrailPolicies({
          policyType: type,
          ...queryPage(query),
          workspaceId: query.get("workspace_id") ?? undefined,
        });
        return { data: res.policies.map(policySummaryToJson), total_count: res.totalCount };
      },
    ],
    [
      `POST ${base}`,
      async ({ policies }, { body = {} }) => {
        const policy = policyInputFromJson(body, type, "create");
        const res = await policies.createGuardrailPolicy({ policy });
        return { data: res.policy && policyDetailToJson(res.policy) };
      },
    ],
    [
      `GET ${base}/:id`,
      async ({ policies }, { params }) => {
        const res = await policies.getGuardrailPolicy({ policyType: type, id: params.id ?? "" });
        return { data: res.policy && policyDetailToJson(res.policy) };
      },
    ],
    [
      `PUT ${base}/:id`,
      async ({ policies }, { params, body = {} }) => {
        const policy = policyInputFromJson(body, type, "update");
        const res = await policies.updateGuardrailPolicy({ id: params.id ?? "", policy });
        return { data: res.policy && policyDetailToJson(res.policy) };
      },
    ],
    [
      `DELETE ${base}/:id`,
      async ({ policies }, { params }) => {
        const res = await policies.deleteGuardrailPolicy({ policyType: type, id: params.id ?? "" });
        return { deleted: res.deleted };
      },
    ],
  ];
}

const ACCOUNT = `${BASE}/account`;

const accountOperations: [string, GrpcOperation][] = [
  [
    `GET ${ACCOUNT}`,
    async ({ policies }, { query }) => {
      const res = await policies.listAccountPolicies({
        ...queryPage(query),
        policyType: query.get("policy_type") ?? undefined,
      });
      return { data: res.policies.map(accountPolicyToJson), total_count: res.totalCount };
    },
  ],
  [
    `POST ${ACCOUNT}`,
    async ({ policies }, { body = {} }) => {
      const policy = accountPolicyInputFromJson(body, "create");
      const res = await policies.createAccountPolicy({ policy });
      return { data: res.policy && accountPolicyToJson(res.policy) };
    },
  ],
  [
    `PUT ${ACCOUNT}/:id`,
    async ({ policies }, { params, body = {} }) => {
      const { force, fields } = forceOf(body);
      const policy = accountPolicyInputFromJson(fields, "update");
      const res = await policies.updateAccountPolicy({ id: params.id ?? "", policy, force });
      return { data: res.policy && accountPolicyToJson(res.policy) };
    },
  ],
  [
    `DELETE ${ACCOUNT}/:id`,
    async ({ policies }, { params }) => {
      const res = await policies.deleteAccountPolicy({ id: params.id ?? "" });
      return { deleted: res.deleted };
    },
  ],
];

function assignmentOperations(kind: "api_key" | "member"): [string, GrpcOperation][] {
  const path = `${BASE}/assignments/${kind === "api_key" ? "api-keys" : "members"}/:subject`;
  return [
    [
      `GET ${path}`,
      async ({ policies }, { params, query }) => {
        const res = await policies.getPolicyAssignment({
          subjectKind: kind,
          subject: params.subject ?? "",
          workspaceId: query.get("workspace_id") ?? "",
          policyType: query.get("policy_type") ?? "",
        });
        return { data: assignmentStateToJson(res.state) };
      },
    ],
    [
      `PUT ${path}`,
      async ({ policies }, { params, body = {} }) => {
        const req = changeAssignmentFromJson(body, kind, params.subject ?? "");
        const res = await policies.changePolicyAssignment(req);
        return { data: res.changed };
      },
    ],
  ];
}

const OPERATIONS = new Map<string, GrpcOperation>([
  ...POLICY_TYPES.flatMap(typeOperations),
  ...accountOperations,
  ...assignmentOperations("api_key"),
  ...assignmentOperations("member"),
]);

/** Every guardrail policy command of the HTTP API, over GuardrailPolicyService. */
export const policyCommands: Command[] = grpcCommands(POLICY_SPECS, OPERATIONS);
