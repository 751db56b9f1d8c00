import { clone, create } from "@bufbuild/protobuf";
import {
  type Timestamp,
  timestampDate,
  timestampFromMs,
  timestampMs,
} from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import { auditOrigin } from "../../domain/audit.js";
import { callerOf } from "../../domain/auth/caller-auth.js";
import { GUARDRAIL_FIELDS } from "../../domain/guardrail-fields.js";
import { defaultGuardrailId, newId } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS } from "../../domain/limits.js";
import { pageParams } from "../../domain/paging.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type Guardrail,
  type GuardrailInput,
  GuardrailInputSchema,
  GuardrailSchema,
  type GuardrailShadow,
  GuardrailShadowSchema,
  KeyAssignmentSchema,
  MemberAssignmentSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GetGuardrailShadowResponse,
  GoverningGuardrailSchema,
  type GuardrailService,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  type CheckContext,
  checksFailedError,
  failingChecks,
  runChecks,
  runSummary,
} from "../../governance/checks/run-checks.js";
import { managedChanges } from "../../governance/policy/guardrail-parts.js";
import { shadowVersion } from "../../governance/shadow-version.js";
import { quote } from "../../platform/quote.js";
import {
  conflict,
  failedPrecondition,
  invalidArgument,
  notFound,
  withReason,
} from "../../platform/rpc/errors.js";
import { nowTimestamp } from "../../platform/time.js";
import type { AuditNote } from "../../store/config-outbox/entry.js";
import { decodeFields, encodeFields } from "../../store/guardrail-fields.js";
import { isLimitReached, limitError } from "../../store/limits.js";
import type { PolicyDocStore } from "../../store/policies/types.js";
import {
  type AuditEntry,
  type AuditLog,
  changesBetween,
} from "../../store/request-log/audit-log.js";
import {
  CHANGE_NOTES,
  type GuardrailVersionRow,
  type GuardrailVersions,
} from "../../store/request-log/guardrail-versions.js";
import { isDatabaseUnavailable } from "../../store/request-log/unavailable.js";
import {
  type AssignmentKind,
  type AssignmentRecord,
  ORG_SCOPE,
  type Store,
} from "../../store/types.js";
import { guardrailAuditFields } from "./audit-fields.js";
import type { ModelIds } from "./model-ids.js";
import { shadowExpired, shadowReport, shadowSummary } from "./shadow.js";
import { replayWindow, type SimulationDeps, simulate } from "./simulate.js";
import { applyUpdateMask, fieldsWritten, guardrailFromInput } from "./update-mask.js";
import { fieldsReadTogether, validateGuardrail } from "./validation.js";
import { inputOfVersion, versionMessage } from "./versions.js";

/**
 * An update is retried only when a field it was validated against changed
 * meanwhile (see fieldsReadTogether); after this many such races it is 409.
 */
const UPDATE_ATTEMPTS = 8;
/** Who made an assignment is stored with it: bounded like a subject. */
const ASSIGNED_BY_MAX = GUARDRAIL_LIMITS.assignedByMax;

/** The request log's database away is a 503 worth retrying; anything else stays an internal error. */
function unavailableAsRetry(err: unknown): never {
  if (!isDatabaseUnavailable(err)) throw err;
  throw withReason(
    Code.Unavailable,
    ErrorReason.STORE_UNAVAILABLE,
    "The request log's database is not answering; retry shortly",
  );
}

/** Two reads of a guardrail's shadow are the same shadow: started at the same instant. */
function sameShadow(a: GuardrailShadow | undefined, b: GuardrailShadow): boolean {
  return (
    a?.startedAt !== undefined &&
    b.startedAt !== undefined &&
    timestampMs(a.startedAt) === timestampMs(b.startedAt)
  );
}

function noShadow(id: string) {
  return notFound(ErrorReason.SHADOW_NOT_FOUND, `guardrail ${quote(id)} runs no shadow`);
}

export function defaultGuardrailName(workspaceId: string): string {
  return `Workspace ${workspaceId} Default`;
}

/** The name of the read-only field a check run is kept in. */
const LAST_CHECK_RUN = GuardrailSchema.field.lastCheckRun.name;
/** The name of the read-only field a running shadow is kept in. */
const SHADOW = GuardrailSchema.field.shadow.name;

/** The fields a change may write: what a check's outcome depends on. */
const POLICY_FIELDS = GUARDRAIL_FIELDS.fields
  .filter((f) => f.role === "writable")
  .map((f) => f.name);

export interface GuardrailServiceOptions {
  /** A guardrail's versions (the database's); absent without one. */
  versions?: GuardrailVersions;
  /** What running checks needs: the models and the account's settings. */
  checks: CheckContext;
  /** A report found its shadow expired (its webhook event is due, unless already queued). */
  shadowExpired?: (
    workspaceId: string,
    guardrailId: string,
    report: GetGuardrailShadowResponse,
  ) => void;
}

/**
 * The handlers. Each request has passed its rule in request-rules.ts (ids,
 * masks, lists, every rule of a new guardrail) before it gets here; what is
 * left to check needs the store.
 */
export class GuardrailServiceImpl implements ServiceImpl<typeof GuardrailService> {
  constructor(
    private readonly store: Store,
    private readonly modelIds: ModelIds,
    /** Where management writes are recorded; absent when the process has no database. */
    private readonly audit: AuditLog | undefined,
    private readonly options: GuardrailServiceOptions,
    /** What-if replays read the request log; absent when the process has no database. */
    private readonly simulation?: SimulationDeps,
  ) {
    this.policyDocs = store.openPolicyDocs();
  }

  private readonly policyDocs: PolicyDocStore;

  /** The audit entry of a write, handed to the store with the write itself. */
  private note(ctx: HandlerContext, entry: AuditEntry): AuditNote {
    return { origin: auditOrigin(ctx), entry };
  }

  /**
   * After a write the store accepted: a store that records audit wrote the event with the
   * change; for one that does not, it is written now, before the answer.
   */
  private async recorded(note: AuditNote): Promise<void> {
    if (!this.store.recordsAudit) await this.audit?.recordDurably(note.origin, note.entry);
  }

  private guardrailNote(
    ctx: HandlerContext,
    action: string,
    g: Readonly<Guardrail>,
    before: Readonly<Guardrail> | null,
    after: Readonly<Guardrail> | null,
  ): AuditNote {
    return this.note(ctx, {
      action,
      resource: { type: "guardrail", id: g.id, label: g.name },
      workspaceId: g.workspaceId,
      changes: changesBetween(
        before && guardrailAuditFields(before),
        after && guardrailAuditFields(after),
      ),
    });
  }

  /** The workspace of an existing (or default) guardrail, or 404. */
  /**
   * Refuses a guardrail write that would change a setting of a type the workspace manages
   * through guardrail policies: the guardrails no longer govern that type there, so the change
   * would be accepted and never enforced. A write that leaves those settings as they are (a
   * Terraform apply without a diff) goes through. Answers the policy document's version this
   * was decided on: the store applies the write only while it is unchanged, so a type moved to
   * policies meanwhile sends the write round again (and then refuses it here).
   */
  private async refuseManagedChange(
    workspaceId: string,
    before: Guardrail | undefined,
    after: Guardrail,
  ): Promise<number> {
    const { doc, version } = await this.policyDocs.read(workspaceId);
    const managedTypes = doc.managedTypes ?? [];
    const [first] = managedTypes.length ? managedChanges(before, after, managedTypes) : [];
    if (first)
      throw invalidArgument(
        `${first.field} cannot change here: ${first.type} settings of workspace ${workspaceId} are managed through /api/v1/guardrails/policies/${first.type} since a ${first.type} policy was written there`,
      );
    return version;
  }

  private async workspaceOf(id: string): Promise<string> {
    const ws = await this.store.guardrailWorkspace(id);
    if (!ws) throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
    return ws;
  }

  /** The guardrail, read-only (see Store.readGuardrail): for answers and audit labels. */
  private async load(id: string): Promise<Readonly<Guardrail>> {
    const ws = await this.workspaceOf(id);
    const found = await this.store.readGuardrail(ws, id);
    if (!found) throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
    return found.value;
  }

  async createGuardrail(req: { guardrail?: GuardrailInput }, ctx: HandlerContext) {
    const input = req.guardrail ?? create(GuardrailInputSchema);
    const workspaceId = input.workspaceId ?? (await this.defaultWorkspace());
    const guardrail = this.modelIds.canonicalize(
      guardrailFromInput(input, newId(), workspaceId, nowTimestamp()),
    );
    let policyDocVersion = await this.refuseManagedChange(workspaceId, undefined, guardrail);
    // A new guardrail has no earlier version its checks protect: they run and are kept.
    if (guardrail.checks) guardrail.lastCheckRun = await runChecks(guardrail, this.options.checks);
    // The event shows the guardrail as the store keeps it (exactly the fields it stores).
    const kept = decodeFields(
      encodeFields(guardrail).map(([, bytes]) => bytes),
      1,
    );
    const note = this.guardrailNote(ctx, "guardrail.create", kept, null, kept);
    // Stored only while the policy document is as it was decided on; else decided again.
    let result = await this.store.createGuardrail(guardrail, note, policyDocVersion);
    for (let attempt = 1; attempt < UPDATE_ATTEMPTS && result === "conflict"; attempt++) {
      policyDocVersion = await this.refuseManagedChange(workspaceId, undefined, guardrail);
      result = await this.store.createGuardrail(guardrail, note, policyDocVersion);
    }
    if (result === "conflict")
      throw conflict(
        ErrorReason.UPDATE_CONFLICT,
        "the workspace's guardrail policies are being changed concurrently, retry later",
      );
    if (result === "missing-workspace")
      throw invalidArgument(`workspace_id ${quote(workspaceId)} does not exist`);
    if (result === "exists")
      throw conflict(ErrorReason.ID_COLLISION, "guardrail id collision, retry");
    if (isLimitReached(result)) {
      throw limitError(
        `workspace ${workspaceId} already has ${result.count} guardrails (the maximum is ${result.limit}): delete one first`,
      );
    }
    // Answer with what was stored (exactly the fields the store keeps).
    const stored = (await this.store.getGuardrail(workspaceId, guardrail.id))?.value ?? guardrail;
    await this.recorded(note);
    return { guardrail: stored };
  }

  async getGuardrail(req: { id: string }) {
    return { guardrail: await this.load(req.id) };
  }

  /** Where a request that names no workspace goes (400 once the default was deleted). */
  private async defaultWorkspace(): Promise<string> {
    const id = await this.store.defaultWorkspaceId();
    if (!id)
      throw invalidArgument("workspace_id is required: the default workspace has been deleted");
    return id;
  }

  /**
   * Without workspace_id: the default workspace's guardrails, as OpenRouter
   * lists them; none when there is no default workspace (deleted, or a store
   * emptied and not yet bootstrapped again): nothing to list is not an error.
   */
  async listGuardrails(req: { workspaceId?: string; offset: number; limit: number }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const workspaceId = req.workspaceId ?? (await this.store.defaultWorkspaceId());
    if (workspaceId === undefined) return { guardrails: [], totalCount: 0 };
    const page = await this.store.listGuardrails(workspaceId, offset, limit);
    return { guardrails: page.items, totalCount: page.total };
  }

  /**
   * Read, apply the mask, validate the result, then let the store write the
   * masked fields alone, atomically: concurrent PATCHes of other fields (or
   * of the same field: the last one wins) never conflict. Only when a field
   * that a rule across fields read (limit_usd with reset_interval) changed
   * since the read is the update re-applied to the fresh record; a storm of
   * such races gets 409.
   */
  async updateGuardrail(
    req: {
      id: string;
      guardrail?: GuardrailInput;
      updateMask?: { paths: string[] };
      force: boolean;
    },
    ctx: HandlerContext,
  ) {
    const input = req.guardrail ?? create(GuardrailInputSchema);
    const paths = req.updateMask?.paths ?? [];
    const guardrail = await this.change(ctx, req.id, input, paths, {
      action: "guardrail.update",
      force: req.force,
    });
    return { guardrail };
  }

  /**
   * One change of a guardrail (an update, or a restore of an earlier version): the checks of
   * the guardrail it would leave run first, and a failing one refuses it unless forced. With
   * checks, the change is stored only over the very guardrail they ran against.
   */
  private async change(
    ctx: HandlerContext,
    id: string,
    input: GuardrailInput,
    paths: string[],
    how: {
      action: "guardrail.update" | "guardrail.restore";
      force: boolean;
      restoredFrom?: number;
      /** The change is the shadow's: it ends the shadow it came from. */
      promotes?: GuardrailShadow;
    },
  ): Promise<Guardrail> {
    const ws = await this.workspaceOf(id);
    const isDefault = id === defaultGuardrailId(ws);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const now = nowTimestamp();
      const found = await this.store.getGuardrail(ws, id);
      if (!found && !isDefault)
        throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
      const current =
        found?.value ??
        // Materializing the workspace default: it starts from an empty policy.
        guardrailFromInput({ name: defaultGuardrailName(ws) } as GuardrailInput, id, ws, now);
      current.isWorkspaceDefault = isDefault;
      if (isDefault && paths.includes("name") && input.name !== defaultGuardrailName(ws)) {
        throw invalidArgument("name of a workspace default guardrail cannot be changed");
      }
      if (how.promotes && !sameShadow(current.shadow, how.promotes)) throw noShadow(id);
      const next = applyUpdateMask(current, input, paths, now);
      validateGuardrail(next);
      this.modelIds.canonicalize(next);
      const policyDocVersion = await this.refuseManagedChange(ws, current, next);
      let fields = fieldsWritten(input, paths);
      let unchanged = fieldsReadTogether(fields);
      const failing = await this.checked(next, how.force);
      if (next.checks || current.lastCheckRun) {
        fields = [...fields, LAST_CHECK_RUN];
        // What the checks ran against is what is stored: any other field changed since is a retry.
        unchanged = POLICY_FIELDS.filter((f) => !fields.includes(f));
      }
      if (how.promotes) {
        next.shadow = undefined;
        fields = [...fields, SHADOW];
      }
      // The change this request makes: the fields it writes, from what it read.
      const note = this.guardrailNote(ctx, how.action, next, current, next);
      if (how.promotes)
        note.entry.changes[SHADOW] = { before: shadowSummary(how.promotes), after: null };
      if (how.restoredFrom !== undefined)
        note.entry.changes[CHANGE_NOTES.restoredFrom] = { before: null, after: how.restoredFrom };
      if (failing.length > 0) {
        note.entry.changes[CHANGE_NOTES.forced] = { before: null, after: true };
        note.entry.changes[CHANGE_NOTES.failingChecks] = { before: null, after: failing };
      }
      const result = await this.store.patchGuardrail(
        {
          workspaceId: ws,
          id,
          readVersion: found?.version ?? 0,
          fields,
          next,
          unchanged,
          read: current,
          materialize: isDefault,
          policyDocVersion,
        },
        note,
      );
      if (result === "missing")
        throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
      if (result !== "conflict") {
        await this.recorded(note);
        return result.value as Guardrail;
      }
    }
    throw conflict(
      ErrorReason.UPDATE_CONFLICT,
      "guardrail is being updated concurrently, retry later",
    );
  }

  /**
   * Runs the checks of the guardrail a change would leave and keeps the run on it (none: no
   * run). A failing check refuses the change (409 naming each) unless it is forced; forced,
   * the failing checks are returned for the audit event.
   */
  private async checked(next: Guardrail, force: boolean): Promise<string[]> {
    next.lastCheckRun = undefined;
    if (!next.checks) return [];
    const run = await runChecks(next, this.options.checks);
    const failing = failingChecks(run);
    if (failing.length > 0 && !force) throw checksFailedError(failing);
    run.forced = failing.length > 0;
    next.lastCheckRun = run;
    return failing;
  }

  async deleteGuardrail(req: { id: string }, ctx: HandlerContext) {
    const ws = await this.workspaceOf(req.id);
    // What it was, for the audit log (read first: afterwards it is gone).
    const before = (await this.store.getGuardrail(ws, req.id))?.value;
    const note = before && this.guardrailNote(ctx, "guardrail.delete", before, before, null);
    if (!(await this.store.deleteGuardrail(ws, req.id, note)))
      throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(req.id)} not found`);
    if (note) await this.recorded(note);
    return { deleted: true };
  }

  /**
   * Replays the requests the guardrail governed under the version an update would make (the
   * same mask and the same rules as UpdateGuardrail), writing nothing.
   */
  async simulateGuardrail(req: {
    id: string;
    change?: GuardrailInput;
    updateMask?: { paths: string[] };
    from?: Timestamp;
    to?: Timestamp;
  }) {
    const current = await this.load(req.id);
    if (!this.simulation) {
      throw withReason(
        Code.Unavailable,
        ErrorReason.STORE_UNAVAILABLE,
        "What-if replays are not available: this process runs without the request-log database",
      );
    }
    const paths = req.updateMask?.paths ?? [];
    const proposed = applyUpdateMask(
      current as Guardrail,
      req.change ?? create(GuardrailInputSchema),
      paths,
      nowTimestamp(),
    );
    validateGuardrail(proposed);
    this.modelIds.canonicalize(proposed);
    const window = replayWindow(
      Date.now(),
      this.simulation.retentionDays,
      req.from && timestampMs(req.from),
      req.to && timestampMs(req.to),
    );
    if ("error" in window) throw invalidArgument(window.error);
    const memberOf = this.memberOf(current.workspaceId);
    return simulate(this.simulation, memberOf, current, proposed, window.fromMs, window.toMs).catch(
      unavailableAsRetry,
    );
  }

  /** A key's member user id ("" for none), as a replay's budget counts member spend. */
  private memberOf(workspaceId: string): (keyHash: string) => Promise<string> {
    return async (hash) => (await this.store.getKey(workspaceId, hash))?.memberUserId ?? "";
  }

  /** One event per call: the guardrail and the subjects assigned to it (or taken from it). */
  private assignmentNote(
    ctx: HandlerContext,
    action: "assignment.create" | "assignment.delete",
    kind: AssignmentKind,
    guardrail: Readonly<Guardrail>,
    subjects: string[],
  ): AuditNote {
    const field = kind === "key" ? "key_hashes" : "member_user_ids";
    return this.note(ctx, {
      action,
      resource: { type: "assignment", id: guardrail.id, label: guardrail.name },
      workspaceId: guardrail.workspaceId,
      changes: {
        [field]:
          action === "assignment.create"
            ? { before: null, after: subjects }
            : { before: subjects, after: null },
      },
    });
  }

  private async assign(
    ctx: HandlerContext,
    kind: AssignmentKind,
    guardrailId: string,
    subjects: string[],
    by: string,
  ) {
    const field = kind === "key" ? "key_hashes" : "member_user_ids";
    const guardrail = await this.load(guardrailId);
    if (by.length > ASSIGNED_BY_MAX)
      throw invalidArgument(`assigned_by must be at most ${ASSIGNED_BY_MAX} characters`);
    const unique = [...new Set(subjects)];
    for (const [i, s] of unique.entries()) {
      if (kind === "key") {
        const scope = await this.store.keyScope(s);
        if (scope !== guardrail.workspaceId) {
          throw invalidArgument(
            `${field}[${i}]: no key with hash ${s} in the guardrail's workspace ${guardrail.workspaceId}`,
          );
        }
      }
    }
    const createdAtMs = Date.now();
    const records: AssignmentRecord[] = unique.map((subject) => ({
      id: newId(),
      subject,
      guardrailId,
      workspaceId: guardrail.workspaceId,
      assignedBy: by,
      createdAtMs,
    }));
    const note = this.assignmentNote(ctx, "assignment.create", kind, guardrail, unique);
    const result = await this.store.assign(kind, records, note);
    if (result === "missing")
      throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(guardrailId)} not found`);
    if (isLimitReached(result)) {
      const what = kind === "key" ? "key assignments" : "member assignments";
      throw limitError(
        `workspace ${guardrail.workspaceId} already has ${result.count} ${what}; assigning ${result.adding} more would exceed the maximum of ${result.limit} (nothing was assigned)`,
      );
    }
    if (result.assigned > 0) await this.recorded(note);
    return result.assigned;
  }

  private async unassign(
    ctx: HandlerContext,
    kind: AssignmentKind,
    guardrailId: string,
    subjects: string[],
  ) {
    const guardrail = await this.load(guardrailId);
    const note = this.assignmentNote(ctx, "assignment.delete", kind, guardrail, [
      ...new Set(subjects),
    ]);
    const removed = await this.store.unassign(
      kind,
      guardrail.workspaceId,
      guardrailId,
      subjects,
      note,
    );
    if (removed > 0) await this.recorded(note);
    return removed;
  }

  private async listAssignments(
    kind: AssignmentKind,
    req: { guardrailId?: string; offset: number; limit: number },
  ) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const ws =
      req.guardrailId === undefined ? undefined : (await this.load(req.guardrailId)).workspaceId;
    return this.store.listAssignments(kind, ws, req.guardrailId, offset, limit);
  }

  async assignKeys(req: { guardrailId: string; keyHashes: string[] }, ctx: HandlerContext) {
    const by = callerOf(ctx).principal.key.hash;
    return { assignedCount: await this.assign(ctx, "key", req.guardrailId, req.keyHashes, by) };
  }

  async unassignKeys(req: { guardrailId: string; keyHashes: string[] }, ctx: HandlerContext) {
    return { unassignedCount: await this.unassign(ctx, "key", req.guardrailId, req.keyHashes) };
  }

  async listKeyAssignments(req: { guardrailId?: string; offset: number; limit: number }) {
    const page = await this.listAssignments("key", req);
    const assignments = await Promise.all(
      page.items.map(async (a) => {
        const key = await this.store.getKey(a.workspaceId, a.subject);
        return create(KeyAssignmentSchema, {
          id: a.id,
          keyHash: a.subject,
          guardrailId: a.guardrailId,
          keyName: key?.name ?? "",
          keyLabel: key?.label ?? "",
          assignedBy: a.assignedBy,
          createdAt: timestampFromMs(a.createdAtMs),
        });
      }),
    );
    return { assignments, totalCount: page.total };
  }

  async assignMembers(req: { guardrailId: string; memberUserIds: string[] }, ctx: HandlerContext) {
    const by = callerOf(ctx).principal.key.hash;
    return {
      assignedCount: await this.assign(ctx, "member", req.guardrailId, req.memberUserIds, by),
    };
  }

  async unassignMembers(
    req: { guardrailId: string; memberUserIds: string[] },
    ctx: HandlerContext,
  ) {
    return {
      unassignedCount: await this.unassign(ctx, "member", req.guardrailId, req.memberUserIds),
    };
  }

  async listMemberAssignments(req: { guardrailId?: string; offset: number; limit: number }) {
    const page = await this.listAssignments("member", req);
    return {
      assignments: page.items.map((a) =>
        create(MemberAssignmentSchema, {
          id: a.id,
          userId: a.subject,
          guardrailId: a.guardrailId,
          workspaceId: a.workspaceId,
          // One deployment is one organization, whose scope holds the management keys.
          organizationId: ORG_SCOPE,
          assignedBy: a.assignedBy,
          createdAt: timestampFromMs(a.createdAtMs),
        }),
      ),
      totalCount: page.total,
    };
  }

  async getWorkspaceDefault(req: { workspaceId: string }) {
    if (!(await this.store.getWorkspace(req.workspaceId))) {
      throw notFound(
        ErrorReason.WORKSPACE_NOT_FOUND,
        `workspace ${quote(req.workspaceId)} not found`,
      );
    }
    const id = defaultGuardrailId(req.workspaceId);
    const found = await this.store.getGuardrail(req.workspaceId, id);
    return { guardrailId: id, guardrail: found?.value };
  }

  async resolveEffectivePolicy(req: { keyHash: string }) {
    const gov = await this.store.loadGovernance(req.keyHash);
    if (!gov) throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.keyHash)} not found`);
    const sources: [string, Guardrail | undefined][] = [
      ["key", gov.keyGuardrail],
      ["member", gov.memberGuardrail],
      ["workspace_default", gov.defaultGuardrail],
    ];
    return {
      keyHash: req.keyHash,
      workspaceId: gov.key.workspaceId,
      guardrails: sources.flatMap(([source, guardrail]) =>
        guardrail ? [create(GoverningGuardrailSchema, { source, guardrail })] : [],
      ),
    };
  }

  /** The versions reader, or 400 when this process has no database to keep them. */
  private versionStore(): GuardrailVersions {
    if (!this.options.versions)
      throw failedPrecondition(
        "guardrail versions are kept in the database, which is not configured",
      );
    return this.options.versions;
  }

  /**
   * 404 unless the guardrail exists or has versions (a deleted one's stay readable for the
   * audit retention).
   */
  private async knownGuardrail(id: string, versions: number): Promise<void> {
    if (versions > 0) return;
    await this.workspaceOf(id);
  }

  async listGuardrailVersions(req: { guardrailId: string; offset: number; limit: number }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const page = await this.versionStore().list(req.guardrailId, offset, limit);
    await this.knownGuardrail(req.guardrailId, page.total);
    return { versions: page.versions.map((v) => versionMessage(v)), totalCount: page.total };
  }

  private async version(id: string, n: number): Promise<GuardrailVersionRow> {
    const row = await this.versionStore().get(id, n);
    if (row) return row;
    const { total } = await this.versionStore().list(id, 0, 1);
    await this.knownGuardrail(id, total);
    throw notFound(
      ErrorReason.GUARDRAIL_VERSION_NOT_FOUND,
      `guardrail ${quote(id)} has no version ${n}${total > 0 ? ` (its versions are 1 to ${total})` : ""}`,
    );
  }

  async getGuardrailVersion(req: { guardrailId: string; version: number }) {
    return { version: versionMessage(await this.version(req.guardrailId, req.version), true) };
  }

  /**
   * A new version equal to version n: every writable field as n left it, as one change (its
   * checks, which are n's own, must pass unless forced).
   */
  async restoreGuardrailVersion(
    req: { guardrailId: string; version: number; force: boolean },
    ctx: HandlerContext,
  ) {
    await this.workspaceOf(req.guardrailId);
    const row = await this.version(req.guardrailId, req.version);
    const { input, paths } = inputOfVersion(row);
    const guardrail = await this.change(ctx, req.guardrailId, input, paths, {
      action: "guardrail.restore",
      force: req.force,
      restoredFrom: req.version,
    });
    return { guardrail };
  }

  /**
   * Runs the checks against the guardrail as it is and keeps the run on it (audited; not a
   * version: the policy did not change). Stored only over the guardrail it ran against.
   */
  async runGuardrailChecks(req: { guardrailId: string }, ctx: HandlerContext) {
    const ws = await this.workspaceOf(req.guardrailId);
    const context = this.options.checks;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const found = await this.store.getGuardrail(ws, req.guardrailId);
      if (!found)
        throw notFound(
          ErrorReason.GUARDRAIL_NOT_FOUND,
          `guardrail ${quote(req.guardrailId)} not found`,
        );
      const current = found.value;
      const run = await runChecks(current, context);
      const next = clone(GuardrailSchema, current);
      next.lastCheckRun = run;
      const note = this.note(ctx, {
        action: "guardrail.checks_run",
        resource: { type: "guardrail", id: current.id, label: current.name },
        workspaceId: ws,
        changes: {
          [LAST_CHECK_RUN]: {
            before: current.lastCheckRun ? runSummary(current.lastCheckRun) : null,
            after: runSummary(run),
          },
        },
      });
      const result = await this.store.patchGuardrail(
        {
          workspaceId: ws,
          id: req.guardrailId,
          readVersion: found.version,
          fields: [LAST_CHECK_RUN],
          next,
          unchanged: POLICY_FIELDS,
          read: current,
          materialize: false,
        },
        note,
      );
      if (result === "missing")
        throw notFound(
          ErrorReason.GUARDRAIL_NOT_FOUND,
          `guardrail ${quote(req.guardrailId)} not found`,
        );
      if (result !== "conflict") {
        await this.recorded(note);
        return { run };
      }
    }
    throw conflict(
      ErrorReason.UPDATE_CONFLICT,
      "guardrail is being updated concurrently, retry later",
    );
  }

  /**
   * Writes a guardrail's shadow field alone (audited, no version: the live policy is unchanged),
   * stored only over the very guardrail `make` read, so a proposed version is never computed
   * from a guardrail changed meanwhile.
   */
  private async writeShadow(
    ctx: HandlerContext,
    id: string,
    action: "guardrail.shadow_start" | "guardrail.shadow_end",
    make: (current: Guardrail) => GuardrailShadow | undefined,
  ): Promise<GuardrailShadow | undefined> {
    const ws = await this.workspaceOf(id);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const found = await this.store.getGuardrail(ws, id);
      if (!found)
        throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
      const current = found.value;
      const shadow = make(current);
      const next = clone(GuardrailSchema, current);
      next.shadow = shadow;
      const note = this.note(ctx, {
        action,
        resource: { type: "guardrail", id: current.id, label: current.name },
        workspaceId: ws,
        changes: {
          [SHADOW]: { before: shadowSummary(current.shadow), after: shadowSummary(shadow) },
        },
      });
      const result = await this.store.patchGuardrail(
        {
          workspaceId: ws,
          id,
          readVersion: found.version,
          fields: [SHADOW],
          next,
          unchanged: [...POLICY_FIELDS, SHADOW],
          read: current,
          materialize: false,
        },
        note,
      );
      if (result === "missing")
        throw notFound(ErrorReason.GUARDRAIL_NOT_FOUND, `guardrail ${quote(id)} not found`);
      if (result !== "conflict") {
        await this.recorded(note);
        return shadow;
      }
    }
    throw conflict(
      ErrorReason.UPDATE_CONFLICT,
      "guardrail is being updated concurrently, retry later",
    );
  }

  /**
   * Starts deciding a proposed change beside the live guardrail: the change is validated as an
   * update's (same mask, same rules) and the guardrail it would leave is kept with the shadow.
   */
  async startGuardrailShadow(
    req: {
      guardrailId: string;
      change?: GuardrailInput;
      updateMask?: { paths: string[] };
      expiresAt?: Timestamp;
    },
    ctx: HandlerContext,
  ) {
    const paths = req.updateMask?.paths ?? [];
    const change = req.change ?? create(GuardrailInputSchema);
    const nowMs = Date.now();
    const shadow = await this.writeShadow(ctx, req.guardrailId, "guardrail.shadow_start", (g) => {
      if (g.shadow && !shadowExpired(g.shadow, nowMs))
        throw conflict(
          ErrorReason.SHADOW_EXISTS,
          `guardrail ${quote(g.id)} already runs a shadow until ${timestampDate(g.shadow.expiresAt ?? timestampFromMs(0)).toISOString()}: promote or end it first`,
        );
      // Refused as the PATCH would be; requests are decided by the change applied to the live
      // guardrail as it is when each principal loads (shadow-version.ts), not by this version.
      validateGuardrail(applyUpdateMask(g, change, paths, nowTimestamp()));
      return create(GuardrailShadowSchema, {
        change,
        updateMask: paths,
        startedAt: timestampFromMs(nowMs),
        expiresAt: req.expiresAt,
      });
    });
    return { shadow };
  }

  /** The shadow and what it would have changed since it started (an expired one says so). */
  async getGuardrailShadow(req: { guardrailId: string }) {
    const { answer, workspaceId } = await this.shadowReportOf(req.guardrailId);
    // Whoever notices an expiry first announces it: this read, or the control plane's sweep.
    if (answer.expired) this.options.shadowExpired?.(workspaceId, req.guardrailId, answer);
    return answer;
  }

  /** A guardrail's shadow report, and the guardrail's workspace (for the expiry's event). */
  async shadowReportOf(guardrailId: string) {
    const g = await this.load(guardrailId);
    if (!g.shadow) throw noShadow(guardrailId);
    const answer = await shadowReport(
      { simulation: this.simulation, memberOf: this.memberOf(g.workspaceId) },
      g,
      shadowVersion(g, g.shadow),
      g.shadow,
      Date.now(),
    ).catch(unavailableAsRetry);
    return { answer, workspaceId: g.workspaceId };
  }

  /** Applies the shadow's change as an update (its checks run as for one) and ends the shadow. */
  async promoteGuardrailShadow(req: { guardrailId: string; force: boolean }, ctx: HandlerContext) {
    const g = await this.load(req.guardrailId);
    const shadow = g.shadow;
    if (!shadow?.change) throw noShadow(req.guardrailId);
    const guardrail = await this.change(ctx, req.guardrailId, shadow.change, shadow.updateMask, {
      action: "guardrail.update",
      force: req.force,
      promotes: shadow,
    });
    return { guardrail };
  }

  async endGuardrailShadow(req: { guardrailId: string }, ctx: HandlerContext) {
    await this.writeShadow(ctx, req.guardrailId, "guardrail.shadow_end", (g) => {
      if (!g.shadow) throw noShadow(req.guardrailId);
      return undefined;
    });
    return { ended: true };
  }
}
