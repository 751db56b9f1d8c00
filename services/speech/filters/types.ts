export type FilterActionName = "block" | "redact" | "flag";

export interface FilterRule {
  /** builtin slug, or "custom" */
  slug: string;
  action: FilterActionName;
  /**
   * Replacement text for redact. Builtins always use their fixed label ([EMAIL] ...), whatever
   * is passed; a custom filter without one gets "[REDACTED]" ("[BLOCKED]" when it blocks).
   */
  label: string;
  /** custom filters only: the RE2 pattern */
  pattern?: string;
  /** regex-prompt-injection only: "user_only" | "all_messages" (default all) */
  scanScope?: "user_only" | "all_messages";
}

export interface FilterOutcome {
  slug: string;
  label: string;
  action: FilterActionName;
  count: number;
}

export interface TextPart {
  text: string;
  /** "user" for input text/turns; "instructions" for delivery instructions */
  role: "user" | "instructions";
}

export interface FilterResult {
  /** the parts after redaction, same order and roles */
  parts: TextPart[];
  /** set when any block rule matched: the label of the first block hit, for the message "Request blocked by content filter: <label>" */
  blockedBy?: { slug: string; label: string };
  /** one entry per rule that matched (count = number of matches); never the matched text */
  outcomes: FilterOutcome[];
}
