import type { AccountSettings } from "./types.js";

/** The account-wide data-policy settings a guardrail may only tighten (README "Policy algebra"). */
export function accountSettings(env: NodeJS.ProcessEnv): AccountSettings {
  return {
    allowSafetyRetentionGoogle: env.ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE !== "false",
    allowSafetyRetentionOther: env.ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER !== "false",
  };
}
