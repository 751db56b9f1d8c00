/**
 * Redis key layout. Everything that one script or transaction touches shares
 * the workspace hash tag `{w:<id>}`, so the store runs unchanged on a Redis
 * Cluster. The few global keys (indexes and id -> workspace pointers) are only
 * ever touched by single-key commands, in an order that is safe on failure.
 */
/** The hash of a kind's assignments, and the stem of its indexes. */
export function assignmentTag(kind: "key" | "member"): "ka" | "ma" {
  return kind === "key" ? "ka" : "ma";
}

export class RedisKeys {
  constructor(private readonly prefix: string) {}

  private tagged(scope: string, suffix: string): string {
    return `${this.prefix}:{w:${scope}}:${suffix}`;
  }

  // Global, single-key.
  org = () => `${this.prefix}:org`;
  workspaces = () => `${this.prefix}:workspaces`;
  slugs = () => `${this.prefix}:ws-slugs`;
  guardrailPointer = (id: string) => `${this.prefix}:gw:${id}`;
  keyPointer = (hash: string) => `${this.prefix}:kw:${hash}`;
  /** Guardrail policy id -> the scope of the document holding it (store/policies). */
  policyIndex = () => `${this.prefix}:policy-index`;

  // Per workspace (hash tag).
  workspace = (ws: string) => this.tagged(ws, "ws");
  guardrail = (ws: string, id: string) => this.tagged(ws, `g:${id}`);
  guardrailIndex = (ws: string) => this.tagged(ws, "gs");
  key = (ws: string, hash: string) => this.tagged(ws, `k:${hash}`);
  keyIndex = (ws: string) => this.tagged(ws, "ks");
  /** The enabled keys only, so listing them pages in Redis too. */
  enabledKeyIndex = (ws: string) => this.tagged(ws, "ks-on");
  assignments = (ws: string, kind: "key" | "member") => this.tagged(ws, assignmentTag(kind));
  /** Every assignment of a kind by time (member: subject, score: createdAtMs). */
  assignmentIndex = (ws: string, kind: "key" | "member") =>
    this.tagged(ws, `${assignmentTag(kind)}-i`);
  /** The assignments of one guardrail; scripts derive it as `<scope prefix><tag>:g:<id>`. */
  guardrailAssignments = (ws: string, kind: "key" | "member", guardrailId: string) =>
    this.tagged(ws, `${assignmentTag(kind)}:g:${guardrailId}`);
  /** The workspace's added members: user id -> MemberRecord JSON (outbox-lua.ts reads "wm"). */
  members = (ws: string) => this.tagged(ws, "wm");
  /** The scope's guardrail policy document: "doc", its version "v", guardrail writes "gw". */
  policies = (ws: string) => this.tagged(ws, "policies");
  rate = (ws: string, hash: string, window: number) => this.tagged(ws, `rate:${hash}:${window}`);
  credits = (ws: string) => this.tagged(ws, "credits");
  /** Every credit ever added: with the balance it tells the workspace's total usage. */
  creditsAdded = (ws: string) => this.tagged(ws, "credits-added");
  /** Set with the top-up it marks, so a repeated Idempotency-Key adds the credits once. */
  creditsOnce = (ws: string, onceId: string) => this.tagged(ws, `credits-idem:${onceId}`);
  /** A key's usage counter (see key-usage.ts for the suffixes). */
  keyUsage = (ws: string, suffix: string) => this.tagged(ws, suffix);
  keySpend = (ws: string, hash: string) => this.tagged(ws, `keyspend:${hash}`);
  /** One entity's spend under one guardrail: a hash of UTC day -> micro-dollars. */
  budgetSpend = (ws: string, guardrailId: string, entity: string) =>
    this.tagged(ws, `spend-d:${guardrailId}:${entity}`);
  /**
   * The workspace's budget counters (member: `<guardrail id>/<entity>`, score:
   * the UTC day last charged), so metrics read only the counters a window can
   * hold without scanning the keyspace.
   */
  spendIndex = (ws: string) => this.tagged(ws, "spend-i");
  /**
   * One Idempotency-Key's claim and answer (a hash; the id is already a hash of caller and key).
   * One key per command, on a tag of its own, so it lands on any node of a cluster alike.
   */
  idempotency = (id: string) => `${this.prefix}:{i:${id}}:idem`;
  /** Pub/sub channel announcing which scope changed (cache invalidation). */
  invalidations = () => `${this.prefix}:invalidate`;
  /** Marks an admission as settled, so a retried settlement applies once. */
  settled = (ws: string, admissionId: string) => this.tagged(ws, `settled:${admissionId}`);
  /** The scopes that ever held a reservation tracked for recovery (global, single-key). */
  recoveryScopes = () => `${this.prefix}:resv-scopes`;
  /** A scope's tracked reservations by lease end; scripts derive `resv`, `resv-a`, `resv-r`. */
  reservationLeases = (ws: string) => this.tagged(ws, "resv-i");
  /** A scope's outbox of records by time; the records are in `outbox`. */
  outboxIndex = (ws: string) => this.tagged(ws, "outbox-i");
  /** The scope's configuration outbox (store/config-outbox): a stream the drainers empty. */
  configOutbox = (ws: string) => this.tagged(ws, "outbox-cfg");
  /** Prefix of this workspace's tagged keys, for scripts that build key names. */
  scopePrefix = (ws: string) => this.tagged(ws, "");
}
