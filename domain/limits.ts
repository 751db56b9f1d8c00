import type { JsonLimits } from "../platform/rpc/json-checks.js";

/**
 * Every documented limit of Railgate (docs/api.md: API decisions, Speech), in one
 * place. The services check them, the gateway checks the same numbers before a
 * request leaves HTTP, the store bounds its counts with them and the docs'
 * tables state them: a number changed here changes every surface at once.
 * It lives in domain/ because all of those layers import it (store/ and
 * gateway/ as much as services/) and domain/ depends on none of them.
 * Lengths are in characters (code points) unless a name says bytes.
 */

/** Guardrail fields, and assignment calls. */
export const GUARDRAIL_LIMITS = {
  nameMax: 200,
  descriptionMax: 1000,
  /** Items of each list field (models, providers, regions) and each item's length. */
  listMaxItems: 1000,
  listItemMax: 200,
  customFiltersMax: 100,
  patternMax: 100_000,
  labelMax: 100,
  limitUsdMax: 1_000_000_000,
  /** Distinct key hashes or member ids in one assign/unassign call, and a member id's length. */
  subjectsMax: 1000,
  subjectMax: 256,
  /** The free-form "who assigned it" an assignment records. */
  assignedByMax: 256,
  /** A guardrail's checks, a check's name, its example input and expected reason. */
  checksMax: 50,
  checkNameMax: 200,
  checkInputMax: 10_000,
  checkReasonMax: 200,
} as const;

/** Keys, workspaces, members and credits. */
export const ACCOUNT_LIMITS = {
  /** Key and workspace names. */
  nameMax: 100,
  /** A search of a list (q). */
  searchMax: 200,
  /** Workspace descriptions. */
  descriptionMax: 500,
  /** Workspace slugs: lowercase letters, digits and inner hyphens. */
  slugMax: 64,
  memberIdMax: 256,
  /** User ids in one add or remove of workspace members (each at most memberIdMax characters). */
  membersPerCallMax: 100,
  /** Added members of one workspace (a count limit: 409 beyond, see COUNT_LIMITS). */
  membersPerWorkspaceMax: 10_000,
  rateLimitPerMinuteMax: 1_000_000,
  /** At most this much in one top-up, so a typo cannot make a workspace effectively unmetered. */
  topUpUsdMax: 1_000_000,
} as const;

/** The speech endpoint. */
export const SPEECH_LIMITS = {
  /** Characters of text to synthesize, across input and turns; 413 beyond. */
  maxInputChars: 10_000,
  maxTurns: 64,
  maxInstructionsChars: 4_000,
  maxVoiceChars: 128,
  maxSessionIdChars: 256,
  maxUserChars: 256,
  maxReferenceClips: 3,
  /**
   * Decoded bytes of all reference parts together: OpenRouter's 15 MiB. As base64 that is
   * 20 MiB, which RAILGATE_SPEECH_MAX_BODY_BYTES (21 MiB by default) leaves room for; 413 beyond.
   */
  maxReferenceBytes: 15 * 1024 * 1024,
  /** provider.order, provider.only and provider.ignore: items each, and an item's length. */
  providerListMaxItems: 100,
  providerSlugMax: 200,
  /** A multiplier on the engine's default rate. */
  minSpeed: 0.25,
  maxSpeed: 4,
  /**
   * `trace` is stored with each generation record (30 days): bounded in size,
   * depth (deep values also break protobuf decoding) and number of items.
   */
  trace: { maxBytes: 16 * 1024, maxDepth: 8, maxItems: 1_000 } satisfies JsonLimits,
  /** `provider.options`, all providers' options of one request together. */
  providerOptions: { maxBytes: 16 * 1024, maxDepth: 8, maxItems: 1_000 } satisfies JsonLimits,
} as const;

/** The audit log's list: page sizes and the filters' lengths. */
export const AUDIT_LIMITS = {
  pageDefault: 50,
  pageMax: 100,
  /** action ("key.create") and resource_id (a hash, a uuid, a webhook id). */
  actionMax: 64,
  resourceIdMax: 256,
  /** A search (q). */
  searchMax: 200,
} as const;

/** List pages. */
export const PAGE_LIMITS = {
  /** Items of a page when the request names no limit. */
  default: 50,
  max: 100,
  /** Most models one /models page holds; the OpenRouter SDK asks for 500 by default. */
  modelsMax: 1000,
} as const;

/** What the gateway accepts before routing. */
export const HTTP_LIMITS = {
  /** Path and query together; 414 beyond. */
  targetMaxChars: 8 * 1024,
  /** A client's own X-Request-Id, kept when it is this short (and plain). */
  requestIdMaxChars: 128,
} as const;

/**
 * How many of each thing the store keeps at most. Every bound is checked
 * inside the write that would exceed it (a Lua script on Redis, a synchronous
 * method in the embedded store), so concurrent creates can never overshoot.
 * Why these numbers:
 * - A guardrail's fields are bounded (lists of 1000 items, 100 filters), so
 *   at most ~1 MiB each in the worst case; 1,000 per workspace keeps a
 *   workspace's guardrails below ~1 GiB even then, and far more than any
 *   policy set we have seen needs (typically a handful per team).
 * - Keys are small (~300 bytes): 10,000 per workspace is ~3 MiB and covers a
 *   key per service, per developer and per CI job of a large organization.
 * - Management keys are for operators and automation: 1,000 is generous.
 * - A key holds at most one assignment, so key assignments can never exceed
 *   the keys; member ids are free-form, so member assignments need a bound
 *   of their own: the same 10,000, and the same for added workspace members.
 * - 1,000 workspaces per deployment: listing keys or guardrails across all
 *   workspaces walks the workspace index, which stays cheap at that size.
 */
export interface CountLimits {
  workspaces: number;
  guardrailsPerWorkspace: number;
  keysPerWorkspace: number;
  managementKeys: number;
  keyAssignmentsPerWorkspace: number;
  memberAssignmentsPerWorkspace: number;
  /** Added members per workspace; absent = ACCOUNT_LIMITS.membersPerWorkspaceMax. */
  membersPerWorkspace?: number;
}

export const COUNT_LIMITS: Readonly<CountLimits> = Object.freeze({
  workspaces: 1_000,
  guardrailsPerWorkspace: 1_000,
  keysPerWorkspace: 10_000,
  managementKeys: 1_000,
  keyAssignmentsPerWorkspace: 10_000,
  memberAssignmentsPerWorkspace: 10_000,
});

/** The bound on a workspace's added members a store applies: its own, else the documented one. */
export function membersPerWorkspace(limits: Readonly<CountLimits>): number {
  return limits.membersPerWorkspace ?? ACCOUNT_LIMITS.membersPerWorkspaceMax;
}

/** Budget-alert webhooks (docs/operations.md "Budget alerts (webhooks)"). */
export const WEBHOOK_LIMITS = {
  urlMax: 2048,
  /** A signing secret given by the operator: long enough to resist guessing. */
  secretMin: 16,
  secretMax: 256,
  thresholdsMax: 10,
  /** Percentages of a limit; spend never passes 100% (admission refuses first). */
  thresholdMin: 1,
  thresholdMax: 100,
  creditsBelowUsdMax: 1_000_000_000,
  /** Each event is sent to every webhook of its workspace: a handful is plenty. */
  perWorkspace: 20,
  /** Deliveries per page of GET /webhooks/:id/deliveries: when no limit is given, and at most. */
  /** A deliveries page (cursor-paged). */
  deliveries: { pageDefault: 50, pageMax: 100 },
} as const;
