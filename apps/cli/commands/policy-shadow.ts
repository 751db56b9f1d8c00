import {
  accountShadowRequestFromJson,
  accountShadowStartedToJson,
  accountShadowToJson,
} from "../../../gateway/json/account-simulate-json.js";
import { accountPolicyToJson } from "../../../gateway/json/guardrail-policy-json.js";
import { restoreForceOf } from "../../../gateway/json/guardrail-version-json.js";
import type { Command } from "../command.js";
import { type GrpcOperation, grpcCommands } from "../http/api-command.js";
import { ACCOUNT_SHADOW_SPECS } from "../http/resources/policy-shadow.js";

const SHADOW = "/api/v1/guardrails/policies/account/:id/shadow";

/**
 * A workspace-wide policy's shadow routes (gateway/routes/guardrail-policy-shadow.ts) as the
 * CLI's gRPC transport makes them: the route's JSON parsing, RPC and JSON answer, so `--grpc`
 * prints what the HTTP commands print.
 */
const OPERATIONS = new Map<string, GrpcOperation>([
  [
    `POST ${SHADOW}`,
    async ({ policies }, { params, body = {} }) => {
      const { change, expiresAt } = accountShadowRequestFromJson(body);
      const res = await policies.startAccountPolicyShadow({
        id: params.id ?? "",
        change,
        expiresAt,
      });
      return { data: accountShadowStartedToJson(res) };
    },
  ],
  [
    `GET ${SHADOW}`,
    async ({ policies }, { params }) => {
      const res = await policies.getAccountPolicyShadow({ id: params.id ?? "" });
      return { data: accountShadowToJson(res) };
    },
  ],
  [
    `POST ${SHADOW}/promote`,
    async ({ policies }, { params, body = {} }) => {
      const res = await policies.promoteAccountPolicyShadow({
        id: params.id ?? "",
        force: restoreForceOf(body),
      });
      return { data: res.policy && accountPolicyToJson(res.policy) };
    },
  ],
  [
    `DELETE ${SHADOW}`,
    async ({ policies }, { params }) => {
      const res = await policies.endAccountPolicyShadow({ id: params.id ?? "" });
      return { deleted: res.ended };
    },
  ],
]);

/** The workspace-wide policy shadow commands, over GuardrailPolicyService. */
export const policyShadowCommands: Command[] = grpcCommands(ACCOUNT_SHADOW_SPECS, OPERATIONS);
