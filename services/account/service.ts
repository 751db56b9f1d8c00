import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { auditOrigin } from "../../domain/audit.js";
import { callerOf } from "../../domain/auth/caller-auth.js";
import { REGION_NAMES, regionValue } from "../../domain/enums.js";
import { IDEMPOTENCY_TTL_SECONDS } from "../../domain/idempotency.js";
import {
  defaultGuardrailId,
  hashSecret,
  isUuid,
  membershipId,
  newId,
  newSecret,
  secretLabel,
} from "../../domain/ids.js";
import { pageParams } from "../../domain/paging.js";
import {
  REPLAY_DATA_DAYS_DEFAULT,
  replayDataDaysOf,
  replayDataOf,
} from "../../domain/replay-data.js";
import { slugify } from "../../domain/slug.js";
import {
  type ApiKey,
  ApiKeySchema,
  KeyKind,
  type KeyUsage,
  ReplayData,
  type Workspace,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import {
  type AccountService,
  type CreateKeyRequest,
  type ListAuditEventsRequest,
  type UpdateKeyRequest,
  UpdateKeyRequestSchema,
  type UpdateWorkspaceRequest,
  UpdateWorkspaceRequestSchema,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { fromMicros, toMicros } from "../../governance/policy/money.js";
import { CONFIG_DEFAULTS } from "../../platform/config/config.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { quote } from "../../platform/quote.js";
import { alreadyExists, invalidArgument, notFound, withReason } from "../../platform/rpc/errors.js";
import { copyMaskedFields } from "../../platform/rpc/update-mask.js";
import { type Clock, nowTimestamp, systemClock } from "../../platform/time.js";
import { creditChanges } from "../../store/config-outbox/apply-sql.js";
import type { AuditNote } from "../../store/config-outbox/entry.js";
import { isLimitReached, limitError } from "../../store/limits.js";
import {
  type AuditEntry,
  type AuditLog,
  changesBetween,
} from "../../store/request-log/audit-log.js";
import { ORG_SCOPE, type Store } from "../../store/types.js";
import { listAuditEvents } from "./audit-events.js";
import { keyAuditFields, workspaceAuditFields } from "./audit-fields.js";
import { creditTotals, organizationCredits } from "./credits.js";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  idempotencyIdOf,
  releaseIdempotencyKey,
} from "./idempotency.js";
import { invalidationStream } from "./invalidations.js";
import { searchKeys } from "./key-search.js";
import { readKeyUsage } from "./key-usage.js";
import {
  allMembers,
  distinct,
  MEMBER_ROLE,
  ownersOfEnabledKeys,
  recordToProto,
} from "./workspace-members.js";

const log = componentLogger("account");

/**
 * AccountService's handlers. It is served behind its request rules
 * (request-rules.ts, checkedAccountService): a handler runs only on a request
 * they passed, and checks here only what needs the store.
 */
export class AccountServiceImpl implements ServiceImpl<typeof AccountService> {
  /** Aborted when the process drains: the invalidation streams end (see endWatches). */
  private readonly draining = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly options: {
      rateLimitPerMinute: number;
      /** Where management writes are recorded; absent when the process has no database. */
      audit?: AuditLog;
      /** Admission's clock: key usage is read on the windows admission charges (tests pin one). */
      clock?: Clock;
      /** Each key's newest request-log record, by hash; absent when the process has no database. */
      lastUsed?: (keyHashes: readonly string[]) => Promise<Map<string, number>>;
      /**
       * What a workspace's replay_data may be here: encrypted_input only with a key
       * (RAILGATE_REPLAY_DATA_KEY), and no input kept past the request log's retention.
       */
      replayData?: { keyConfigured: boolean; logRetentionDays: number };
    } = { rateLimitPerMinute: CONFIG_DEFAULTS.rateLimitPerMinute },
  ) {}

  /**
   * What each key spent (exact: the store's counters) and when it was last used (the request
   * log, which lags a settled request by its batch). A request log that does not answer leaves
   * last_used_at unset rather than failing the read of the keys.
   */
  private async usagesOf(keys: readonly ApiKey[]): Promise<KeyUsage[]> {
    const now = this.now();
    const usages = await Promise.all(keys.map((k) => readKeyUsage(this.store, k, now)));
    if (!this.options.lastUsed || keys.length === 0) return usages;
    try {
      const last = await this.options.lastUsed(keys.map((k) => k.hash));
      keys.forEach((k, i) => {
        const at = last.get(k.hash);
        const usage = usages[i];
        if (at !== undefined && usage) usage.lastUsedAt = timestampFromMs(at);
      });
    } catch (err) {
      log.warn(
        { err: String(err) },
        "keys read without last_used_at: the request log did not answer",
      );
    }
    return usages;
  }

  private now(): Date {
    return new Date((this.options.clock ?? systemClock).now());
  }

  /** The audit entry of a write, handed to the store with the write itself. */
  private note(ctx: HandlerContext, entry: AuditEntry): AuditNote {
    return { origin: auditOrigin(ctx), entry };
  }

  /**
   * After a write the store accepted: a store that records audit wrote the event with the
   * change; for one that does not, it is written now, before the answer.
   */
  private async recorded(note: AuditNote): Promise<void> {
    if (!this.store.recordsAudit) await this.options.audit?.recordDurably(note.origin, note.entry);
  }

  /**
   * What a workspace's replay_data needs of this deployment, checked on the workspace a write
   * would leave (so a retention shortened since is caught by the next write too).
   */
  private checkReplayData(ws: Workspace): void {
    const deployment = this.options.replayData;
    const mode = replayDataOf(ws);
    if (mode !== ReplayData.ENCRYPTED_INPUT) return;
    const days = replayDataDaysOf(ws);
    if (deployment && days > deployment.logRetentionDays) {
      throw invalidArgument(
        `replay_data_days must be at most the request log's retention of ${deployment.logRetentionDays} days (got ${days})`,
      );
    }
    if (!deployment?.keyConfigured) {
      throw invalidArgument(
        'replay_data "encrypted_input" needs RAILGATE_REPLAY_DATA_KEY, which this deployment does not set (choose "detections" or "none", or ask the operator to set it)',
      );
    }
  }

  /** Resolves an id or a slug to a stored workspace, or 404. */
  private async workspace(idOrSlug: string): Promise<Workspace> {
    const id = isUuid(idOrSlug) ? idOrSlug : await this.store.workspaceIdBySlug(idOrSlug);
    const ws = id ? await this.store.getWorkspace(id) : undefined;
    if (!ws)
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(idOrSlug)} not found`);
    ws.isDefault = ws.id === (await this.store.defaultWorkspaceId());
    return ws;
  }

  /** Creates the default workspace on first start; later starts find it (or its deletion). */
  async bootstrap(): Promise<string | undefined> {
    const id = newId();
    return this.store.bootstrapDefaultWorkspace(
      create(WorkspaceSchema, {
        id,
        name: "Default",
        slug: "default",
        description: "Created at first start-up",
        defaultGuardrailId: defaultGuardrailId(id),
        createdAt: nowTimestamp(),
      }),
    );
  }

  async createWorkspace(
    req: {
      name: string;
      slug: string;
      description: string;
      audioCache?: boolean;
      replayData?: ReplayData;
      replayDataDays?: number;
    },
    ctx: HandlerContext,
  ) {
    const slug = req.slug || slugify(req.name);
    const id = newId();
    const ws = create(WorkspaceSchema, {
      id,
      name: req.name,
      slug,
      description: req.description,
      defaultGuardrailId: defaultGuardrailId(id),
      audioCache: req.audioCache ?? false,
      replayData: req.replayData ?? ReplayData.NONE,
      replayDataDays: req.replayDataDays ?? REPLAY_DATA_DAYS_DEFAULT,
      createdAt: nowTimestamp(),
    });
    this.checkReplayData(ws);
    const note = this.note(ctx, {
      action: "workspace.create",
      resource: { type: "workspace", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      changes: changesBetween(null, workspaceAuditFields(ws)),
    });
    const created = await this.store.createWorkspace(ws, note);
    if (created === "slug-taken") {
      throw alreadyExists(
        ErrorReason.SLUG_TAKEN,
        `slug ${quote(slug)} is already used by another workspace`,
      );
    }
    if (isLimitReached(created)) {
      throw limitError(
        `the deployment already has ${created.count} workspaces (the maximum is ${created.limit}): delete one first`,
      );
    }
    await this.recorded(note);
    return { workspace: ws };
  }

  async getWorkspace(req: { id: string }) {
    return { workspace: await this.workspace(req.id) };
  }

  async listWorkspaces(req: { offset: number; limit: number }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const page = await this.store.listWorkspaces(offset, limit);
    const def = await this.store.defaultWorkspaceId();
    for (const ws of page.items) ws.isDefault = ws.id === def;
    return { workspaces: page.items, totalCount: page.total };
  }

  async updateWorkspace(req: UpdateWorkspaceRequest, ctx: HandlerContext) {
    const ws = await this.workspace(req.id);
    const previousSlug = ws.slug;
    const before = workspaceAuditFields(ws);
    copyMaskedFields(
      WorkspaceSchema,
      ws,
      UpdateWorkspaceRequestSchema,
      req,
      req.updateMask?.paths ?? [],
    );
    this.checkReplayData(ws);
    ws.updatedAt = nowTimestamp();
    const note = this.note(ctx, {
      action: "workspace.update",
      resource: { type: "workspace", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      changes: changesBetween(before, workspaceAuditFields(ws)),
    });
    const result = await this.store.updateWorkspace(ws, previousSlug, note);
    if (result === "missing")
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(req.id)} not found`);
    if (result === "slug-taken")
      throw alreadyExists(
        ErrorReason.SLUG_TAKEN,
        `slug ${quote(ws.slug)} is already used by another workspace`,
      );
    await this.recorded(note);
    return { workspace: ws };
  }

  /**
   * Refused (409, FAILED_PRECONDITION) while the workspace holds enabled
   * keys, as OpenRouter refuses it: deleting would silently revoke keys in
   * use. The store checks and deletes in one atomic step, so a key enabled
   * meanwhile is never deleted with it.
   */
  async deleteWorkspace(req: { id: string }, ctx: HandlerContext) {
    const ws = await this.workspace(req.id);
    const note = this.note(ctx, {
      action: "workspace.delete",
      resource: { type: "workspace", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      changes: changesBetween(workspaceAuditFields(ws), null),
    });
    const result = await this.store.deleteWorkspace(ws.id, note);
    if (result === "missing")
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(req.id)} not found`);
    if (result !== "ok") {
      throw withReason(
        Code.FailedPrecondition,
        ErrorReason.WORKSPACE_HAS_ENABLED_KEYS,
        `workspace ${quote(req.id)} has ${result.activeKeys} active API key(s): a workspace with active (enabled) keys cannot be deleted; disable or delete its keys first`,
      );
    }
    await this.recorded(note);
    return { deleted: true };
  }

  async listWorkspaceMembers(req: { workspaceId: string; offset: number; limit: number }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const ws = await this.workspace(req.workspaceId);
    const all = await allMembers(this.store, ws.id);
    return { members: all.slice(offset, offset + limit), totalCount: all.length };
  }

  async addWorkspaceMembers(req: { workspaceId: string; userIds: string[] }, ctx: HandlerContext) {
    const ws = await this.workspace(req.workspaceId);
    const userIds = distinct(req.userIds);
    const createdAtMs = Date.now();
    const records = userIds.map((userId) => ({
      id: membershipId(ws.id, userId),
      userId,
      workspaceId: ws.id,
      role: MEMBER_ROLE,
      createdAtMs,
    }));
    // Who is new is read before the write, for the audit event only: the store decides
    // atomically which users it adds (and records the event only when it adds one).
    const before = new Set((await this.store.listMembers(ws.id)).map((m) => m.userId));
    const note = this.note(ctx, {
      action: "workspace.members_add",
      resource: { type: "workspace", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      changes: changesBetween(null, { user_ids: userIds.filter((u) => !before.has(u)) }),
    });
    const result = await this.store.addMembers(ws.id, records, note);
    if (result === "missing")
      throw notFound(
        ErrorReason.WORKSPACE_NOT_FOUND,
        `workspace ${quote(req.workspaceId)} not found`,
      );
    if (isLimitReached(result)) {
      throw limitError(
        `workspace ${ws.id} already has ${result.count} members; adding ${result.adding} would pass the maximum of ${result.limit}: remove some first`,
      );
    }
    if (result.added > 0) await this.recorded(note);
    return { addedCount: result.added, members: result.members.map(recordToProto) };
  }

  /**
   * OpenRouter refuses to remove a member with active keys in the workspace: the keys would stay
   * owned by someone no longer listed. Refused as a whole (409), naming the users.
   */
  async removeWorkspaceMembers(
    req: { workspaceId: string; userIds: string[] },
    ctx: HandlerContext,
  ) {
    const ws = await this.workspace(req.workspaceId);
    const userIds = distinct(req.userIds);
    const owners = await ownersOfEnabledKeys(this.store, ws.id, userIds);
    if (owners.length > 0) {
      throw withReason(
        Code.FailedPrecondition,
        ErrorReason.MEMBER_HAS_ENABLED_KEYS,
        `user_ids ${owners.map((u) => quote(u)).join(", ")} own enabled API keys in workspace ${quote(req.workspaceId)}: a member with enabled keys cannot be removed; disable or delete their keys first`,
      );
    }
    const stored = new Set((await this.store.listMembers(ws.id)).map((m) => m.userId));
    const note = this.note(ctx, {
      action: "workspace.members_remove",
      resource: { type: "workspace", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      changes: changesBetween({ user_ids: userIds.filter((u) => stored.has(u)) }, null),
    });
    const removed = await this.store.removeMembers(ws.id, userIds, note);
    if (removed > 0) await this.recorded(note);
    return { removedCount: removed };
  }

  async createKey(req: CreateKeyRequest, ctx: HandlerContext) {
    let scope: string;
    if (req.kind === KeyKind.MANAGEMENT) {
      scope = ORG_SCOPE;
    } else if (req.workspaceId) {
      scope = (
        await this.workspace(req.workspaceId).catch(() => {
          throw invalidArgument(`workspace_id ${quote(req.workspaceId)} does not exist`);
        })
      ).id;
    } else {
      const def = await this.store.defaultWorkspaceId();
      if (!def)
        throw invalidArgument("workspace_id is required: the default workspace has been deleted");
      scope = def;
    }
    const secret = newSecret(req.kind === KeyKind.MANAGEMENT ? "management" : "standard");
    const key = create(ApiKeySchema, {
      hash: hashSecret(secret),
      name: req.name,
      label: secretLabel(secret),
      kind: req.kind,
      workspaceId: scope === ORG_SCOPE ? "" : scope,
      memberUserId: req.memberUserId,
      limit: req.limit,
      rateLimitPerMinute: req.rateLimitPerMinute,
      limitReset: req.limitReset,
      expiresAt: req.expiresAt,
      includeByokInLimit: req.includeByokInLimit,
      createdAt: nowTimestamp(),
    });
    const note = this.note(ctx, {
      action: "key.create",
      resource: { type: "key", id: key.hash, label: key.name },
      workspaceId: key.workspaceId || null,
      changes: changesBetween(null, keyAuditFields(key)),
    });
    const result = await this.store.createKey(scope, key, note);
    if (result === "missing-workspace")
      throw invalidArgument(`workspace_id ${quote(scope)} does not exist`);
    if (result === "exists") throw alreadyExists(ErrorReason.ID_COLLISION, "key collision, retry");
    if (isLimitReached(result)) {
      const where = scope === ORG_SCOPE ? "the organization" : `workspace ${scope}`;
      const what = scope === ORG_SCOPE ? "management keys" : "keys";
      throw limitError(
        `${where} already has ${result.count} ${what} (the maximum is ${result.limit}): delete one first`,
      );
    }
    await this.recorded(note);
    return { key, secret, usage: await readKeyUsage(this.store, key, this.now()) };
  }

  private async findKey(hash: string): Promise<{ scope: string; key: ApiKey }> {
    const scope = await this.store.keyScope(hash);
    const key = scope === undefined ? undefined : await this.store.getKey(scope, hash);
    if (scope === undefined || !key)
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(hash)} not found`);
    return { scope, key };
  }

  async getKey(req: { hash: string }) {
    const { key } = await this.findKey(req.hash);
    return { key, usage: (await this.usagesOf([key]))[0] };
  }

  async listKeys(req: {
    workspaceId?: string;
    offset: number;
    limit: number;
    includeDisabled: boolean;
    q: string;
  }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const scope =
      req.workspaceId === undefined ? undefined : (await this.workspace(req.workspaceId)).id;
    const text = req.q.trim();
    // The store pages the enabled keys from an index of their own; a search reads the scope's
    // keys (as many as COUNT_LIMITS allow a workspace) and pages the matches.
    const page = text
      ? await searchKeys(this.store, scope, text, !req.includeDisabled, offset, limit)
      : await this.store.listKeys(scope, offset, limit, !req.includeDisabled);
    const usages = await this.usagesOf(page.items);
    return { keys: page.items, totalCount: page.total, usages };
  }

  async updateKey(req: UpdateKeyRequest, ctx: HandlerContext) {
    const { scope, key } = await this.findKey(req.hash);
    const before = keyAuditFields(key);
    copyMaskedFields(ApiKeySchema, key, UpdateKeyRequestSchema, req, req.updateMask?.paths ?? []);
    key.updatedAt = nowTimestamp();
    const note = this.note(ctx, {
      action: "key.update",
      resource: { type: "key", id: key.hash, label: key.name },
      workspaceId: key.workspaceId || null,
      changes: changesBetween(before, keyAuditFields(key)),
    });
    if (!(await this.store.putKey(scope, key, note)))
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.hash)} not found`);
    await this.recorded(note);
    return { key, usage: (await this.usagesOf([key]))[0] };
  }

  async deleteKey(req: { hash: string }, ctx: HandlerContext) {
    const { scope, key } = await this.findKey(req.hash);
    const note = this.note(ctx, {
      action: "key.delete",
      resource: { type: "key", id: key.hash, label: key.name },
      workspaceId: key.workspaceId || null,
      changes: changesBetween(keyAuditFields(key), null),
    });
    if (!(await this.store.deleteKey(scope, req.hash, note)))
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.hash)} not found`);
    await this.recorded(note);
    return { deleted: true };
  }

  /** The caller, as the authentication interceptor resolved it from the call's metadata. */
  async authenticate(_req: unknown, ctx: HandlerContext) {
    return { key: callerOf(ctx).principal.key };
  }

  /** The calling key (any kind) and what it spent: OpenRouter's GET /key. */
  async getCurrentKey(_req: unknown, ctx: HandlerContext) {
    const { key, policy } = callerOf(ctx).principal;
    const [usage] = await this.usagesOf([key]);
    // The regions of the key's effective policy, the one enforcement reads: its guardrails and
    // its guardrail policies alike.
    const allowedDataRegions = REGION_NAMES.filter(
      (r) => !policy.regions || policy.regions.has(r),
    ).map(regionValue);
    return {
      key,
      usage,
      allowedDataRegions,
      rateLimitPerMinute: key.rateLimitPerMinute ?? this.options.rateLimitPerMinute,
    };
  }

  async getCredits(req: { workspaceId: string }) {
    if (!req.workspaceId) return { workspaceId: "", ...(await organizationCredits(this.store)) };
    const ws = await this.workspace(req.workspaceId);
    return { workspaceId: ws.id, ...(await creditTotals(this.store, ws.id)) };
  }

  /**
   * A top-up is an audit event with the amount and the balance it left: the console's credit
   * history is the audit log filtered to resource_type "credits" and the workspace.
   */
  async addCredits(req: { workspaceId: string; amountUsd: number }, ctx: HandlerContext) {
    const ws = await this.workspace(req.workspaceId);
    // Only to tell a first top-up (the workspace was unmetered: no balance before) from others,
    // where the event is written here; a store that records audit tells it from its own reply.
    const metered = this.store.recordsAudit || (await this.store.getCredits(ws.id)) !== undefined;
    const amountMicros = toMicros(req.amountUsd);
    const note = this.note(ctx, {
      action: "credits.add",
      resource: { type: "credits", id: ws.id, label: ws.name },
      workspaceId: ws.id,
      // The balance it leaves is known after the write: see creditChanges.
      changes: {},
    });
    // With an Idempotency-Key the top-up applies once per key, in the step that moves the credits.
    const onceId = idempotencyIdOf(ctx);
    const { balanceMicros, applied } =
      onceId === undefined
        ? { balanceMicros: await this.store.addCredits(ws.id, amountMicros, note), applied: true }
        : await this.store.addCreditsOnce(
            ws.id,
            amountMicros,
            onceId,
            IDEMPOTENCY_TTL_SECONDS,
            note,
          );
    // A repeated key changed nothing: nothing to audit.
    if (applied) {
      note.entry.changes = creditChanges(amountMicros, balanceMicros, metered);
      await this.recorded(note);
    }
    return { workspaceId: ws.id, balanceUsd: fromMicros(balanceMicros) };
  }

  claimIdempotencyKey(req: { fingerprint: string }, ctx: HandlerContext) {
    return claimIdempotencyKey(this.store, req, ctx);
  }

  completeIdempotencyKey(
    req: { token: string; status: number; body: string },
    ctx: HandlerContext,
  ) {
    return completeIdempotencyKey(this.store, req, ctx);
  }

  releaseIdempotencyKey(req: { token: string }, ctx: HandlerContext) {
    return releaseIdempotencyKey(this.store, req, ctx);
  }

  async listAuditEvents(req: ListAuditEventsRequest) {
    return listAuditEvents(this.options.audit, req);
  }

  async *watchInvalidations(_req: unknown, ctx: HandlerContext) {
    const signal = AbortSignal.any([ctx.signal, this.draining.signal]);
    for await (const scope of invalidationStream(this.store, signal)) yield { scope };
  }

  /**
   * Ends every invalidation stream (cleanly: status OK), for a drain. They never end by
   * themselves, so without this a draining replica would hold its gateways' streams for the
   * whole grace period and then cut them; ended now, each gateway follows another replica at once.
   */
  endWatches(): void {
    this.draining.abort();
  }
}
