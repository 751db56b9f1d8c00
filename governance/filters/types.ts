import type { FilterActionName, ScanScopeName } from "../../domain/enums.js";

export type { FilterActionName };

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
  scanScope?: ScanScopeName;
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

/** The rule whose match refused a request. */
export interface Blocked {
  slug: string;
  /** The rule's label ([EMAIL], a custom label, [BLOCKED]). */
  label: string;
  /** What the block message names: a builtin's display name, a custom rule's label. */
  name: string;
  /** regex-prompt-injection only: the names of the patterns that matched, each once, in order. */
  patterns?: string[];
}

export interface FilterResult {
  /** the parts after redaction, same order and roles */
  parts: TextPart[];
  /** set when any block rule matched: what the first block hit was (see Blocked) */
  blockedBy?: Blocked;
  /** one entry per rule that matched (count = number of matches); never the matched text */
  outcomes: FilterOutcome[];
}
