import {
  type BudgetScope,
  BudgetScopeSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * Which budget layer a spend counter is (railgate.speech.v1.BudgetScope), named as OpenRouter's
 * KeyBudgetScope: "workspace_default_member", "workspace_default_key", "member", "api_key".
 * Admission, the budget alerts and explain's JSON use these names (governance/policy/
 * budget-counters.ts); explain's proto carries the enum.
 */
export type BudgetScopeName = EnumApiName<typeof BudgetScope>;

export const BUDGET_SCOPES = enumNames<typeof BudgetScope>(BudgetScopeSchema);
