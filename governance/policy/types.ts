import type {
  FilterActionName,
  GuardrailSourceName,
  RegionName,
  ScanScopeName,
} from "../../domain/enums.js";
import type { WindowInterval } from "../../domain/windows.js";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";

export type ZdrVendor = "anthropic" | "openai" | "google" | "xai" | "other";
/** How a guardrail governs a key: "key", "member", "workspace_default" (the proto enum's names). */
export type GuardrailSource = GuardrailSourceName;

export interface GoverningGuardrail {
  source: GuardrailSource;
  guardrail: Guardrail;
  /** Set when the guardrail stands for a guardrail policy (policy-guardrails.ts): refusals name it so. */
  policy?: true;
  /** The policy's type, and the guardrails whose part of it the policy replaced (explanations). */
  policyType?: string;
  replacedGuardrailIds?: string[];
  /** A policy's running shadow: the guardrail of its proposed settings, and when it ends. */
  policyShadow?: { version: Guardrail; expiresAtMs: number };
}

export interface FilterRuleSpec {
  slug: string;
  action: FilterActionName;
  label: string;
  pattern?: string;
  scanScope?: ScanScopeName;
  /** The guardrail it came from, for explanations. */
  guardrailId: string;
  /** That guardrail stands for a guardrail policy (guardrailId is the policy's id). */
  policy?: true;
}

export interface BudgetSpec {
  guardrailId: string;
  guardrailName: string;
  /** The budget is a guardrail policy's, not a guardrail's. */
  policy?: true;
  /** How the guardrail governs the key: it decides whose spend the budget counts (budget-counters.ts). */
  source: GuardrailSource;
  limitUsd: number;
  interval: WindowInterval;
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
  /**
   * The audio cache may neither serve nor store this key's requests: a guardrail says
   * forbid_audio_cache, or enforces zero data retention for any vendor (a stored clip is
   * retention by the gateway itself, whichever provider produced it).
   */
  forbidAudioCache: boolean;
}
