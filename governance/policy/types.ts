import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { RegionName } from "../../platform/regions.js";

export type ZdrVendor = "anthropic" | "openai" | "google" | "xai" | "other";
export type GuardrailSource = "key" | "member" | "workspace_default";

export interface GoverningGuardrail {
  source: GuardrailSource;
  guardrail: Guardrail;
}

export interface FilterRuleSpec {
  slug: string;
  action: "block" | "redact" | "flag";
  label: string;
  pattern?: string;
  scanScope?: "user_only" | "all_messages";
  /** The guardrail it came from, for explanations. */
  guardrailId: string;
}

export interface BudgetSpec {
  guardrailId: string;
  guardrailName: string;
  /** How the guardrail governs the key: it decides whose spend the budget counts (budget-counters.ts). */
  source: GuardrailSource;
  limitUsd: number;
  interval: "daily" | "weekly" | "monthly";
  includeByok: boolean;
}

/** The account-level settings a guardrail can only tighten. */
export interface AccountSettings {
  allowSafetyRetentionGoogle: boolean;
  allowSafetyRetentionOther: boolean;
}

/** Every governing guardrail folded into one policy (README "Policy algebra"). */
export interface EffectivePolicy {
  guardrails: GoverningGuardrail[];
  /** null = unrestricted. */
  regions: ReadonlySet<RegionName> | null;
  /**
   * The slugs as written. Enforcement checks each guardrail's list on its own
   * (speech policy-rules), since one model may be named by id or by alias.
   */
  allowedModels: ReadonlySet<string> | null;
  allowedProviders: ReadonlySet<string> | null;
  ignoredModels: ReadonlySet<string>;
  ignoredProviders: ReadonlySet<string>;
  zdr: Readonly<Record<ZdrVendor, boolean>>;
  enableFreeModelPublication: boolean;
  enableFreeModelTraining: boolean;
  enablePaidModelTraining: boolean;
  allowSafetyRetentionGoogle: boolean;
  allowSafetyRetentionOther: boolean;
  filters: FilterRuleSpec[];
  budgets: BudgetSpec[];
}
