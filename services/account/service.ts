import { create } from "@bufbuild/protobuf";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type ApiKey,
  ApiKeySchema,
  KeyKind,
  type Workspace,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import {
  type AccountService,
  type CreateKeyRequest,
  type UpdateKeyRequest,
  UpdateKeyRequestSchema,
  type UpdateWorkspaceRequest,
  UpdateWorkspaceRequestSchema,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { callerOf } from "../../platform/auth/caller-auth.js";
import { alreadyExists, invalidArgument, notFound, withReason } from "../../platform/errors.js";
import {
  defaultGuardrailId,
  hashSecret,
  isKeyHash,
  isUuid,
  newId,
  newSecret,
  secretLabel,
} from "../../platform/ids.js";
import { ACCOUNT_LIMITS } from "../../platform/limits.js";
import { pageParams } from "../../platform/paging.js";
import { quote } from "../../platform/quote.js";
import { nowTimestamp } from "../../platform/time.js";
import { isLimitReached, limitError } from "../../store/limits.js";
import { ORG_SCOPE, type Store } from "../../store/types.js";
import { addCredits, creditTotals, organizationCredits } from "./credits.js";
import { invalidationStream } from "./invalidations.js";
import { keyRegions, readKeyUsage } from "./key-usage.js";
import { isSlug, slugify } from "./slug.js";
import { checkUpdateMask } from "./update-mask.js";

const NAME_MAX = ACCOUNT_LIMITS.nameMax;
const DESCRIPTION_MAX = ACCOUNT_LIMITS.descriptionMax;
const MEMBER_ID_MAX = ACCOUNT_LIMITS.memberIdMax;

function checkName(field: string, name: string): void {
  if (name.trim().length === 0 || [...name].length > NAME_MAX) {
    throw invalidArgument(`${field} must be 1 to ${NAME_MAX} characters and not blank`);
  }
}

const RATE_LIMIT_MAX = ACCOUNT_LIMITS.rateLimitPerMinuteMax;

function checkRateLimit(v: number | undefined): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > RATE_LIMIT_MAX)) {
    throw invalidArgument(
      `rate_limit_per_minute must be an integer from 1 to ${RATE_LIMIT_MAX} or null`,
    );
  }
}

function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isFinite(limit) || limit < 0)) {
    throw invalidArgument("limit must be a number >= 0 (USD) or null");
  }
}

export class AccountServiceImpl implements ServiceImpl<typeof AccountService> {
  constructor(
    private readonly store: Store,
    private readonly options: { rateLimitPerMinute: number } = { rateLimitPerMinute: 600 },
  ) {}

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

  async createWorkspace(req: { name: string; slug: string; description: string }) {
    checkName("name", req.name);
    const slug = req.slug || slugify(req.name);
    if (!isSlug(slug)) {
      throw invalidArgument(
        `slug must be 1 to ${ACCOUNT_LIMITS.slugMax} lowercase letters, digits or inner hyphens (derive it from a name with letters, or pass one)`,
      );
    }
    if ([...req.description].length > DESCRIPTION_MAX) {
      throw invalidArgument(`description must be at most ${DESCRIPTION_MAX} characters`);
    }
    const id = newId();
    const ws = create(WorkspaceSchema, {
      id,
      name: req.name,
      slug,
      description: req.description,
      defaultGuardrailId: defaultGuardrailId(id),
      createdAt: nowTimestamp(),
    });
    const created = await this.store.createWorkspace(ws);
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

  async updateWorkspace(req: UpdateWorkspaceRequest) {
    const paths = req.updateMask?.paths ?? [];
    checkUpdateMask(UpdateWorkspaceRequestSchema, req, paths, ["name", "slug", "description"]);
    const ws = await this.workspace(req.id);
    const previousSlug = ws.slug;
    for (const path of paths) {
      if (path === "name") {
        if (req.name === undefined) throw invalidArgument("name cannot be null");
        checkName("name", req.name);
        ws.name = req.name;
      } else if (path === "slug") {
        if (req.slug === undefined || !isSlug(req.slug)) {
          throw invalidArgument(
            `slug must be 1 to ${ACCOUNT_LIMITS.slugMax} lowercase letters, digits or inner hyphens`,
          );
        }
        ws.slug = req.slug;
      } else if (path === "description") {
        const d = req.description ?? "";
        if ([...d].length > DESCRIPTION_MAX) {
          throw invalidArgument(`description must be at most ${DESCRIPTION_MAX} characters`);
        }
        ws.description = d;
      } else {
        throw invalidArgument(`${quote(path)} is not an updatable workspace field`);
      }
    }
    ws.updatedAt = nowTimestamp();
    const result = await this.store.updateWorkspace(ws, previousSlug);
    if (result === "missing")
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(req.id)} not found`);
    if (result === "slug-taken")
      throw alreadyExists(
        ErrorReason.SLUG_TAKEN,
        `slug ${quote(ws.slug)} is already used by another workspace`,
      );
    return { workspace: ws };
  }

  /**
   * Refused (409, FAILED_PRECONDITION) while the workspace holds enabled
   * keys, as OpenRouter refuses it: deleting would silently revoke keys in
   * use. The store checks and deletes in one atomic step, so a key enabled
   * meanwhile is never deleted with it.
   */
  async deleteWorkspace(req: { id: string }) {
    const ws = await this.workspace(req.id);
    const result = await this.store.deleteWorkspace(ws.id);
    if (result === "missing")
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(req.id)} not found`);
    if (result !== "ok") {
      throw withReason(
        Code.FailedPrecondition,
        ErrorReason.WORKSPACE_HAS_ENABLED_KEYS,
        `workspace ${quote(req.id)} has ${result.activeKeys} active API key(s): a workspace with active (enabled) keys cannot be deleted; disable or delete its keys first`,
      );
    }
    return { deleted: true };
  }

  async createKey(req: CreateKeyRequest) {
    checkName("name", req.name);
    checkLimit(req.limit);
    checkRateLimit(req.rateLimitPerMinute);
    if (req.memberUserId.length > MEMBER_ID_MAX) {
      throw invalidArgument(`member_user_id must be at most ${MEMBER_ID_MAX} characters`);
    }
    let scope: string;
    if (req.kind === KeyKind.MANAGEMENT) {
      if (req.workspaceId) throw invalidArgument("workspace_id is not allowed for management keys");
      if (req.memberUserId)
        throw invalidArgument("member_user_id is not allowed for management keys");
      scope = ORG_SCOPE;
    } else if (req.kind === KeyKind.STANDARD) {
      if (req.workspaceId) {
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
    } else {
      throw invalidArgument('kind must be "management" or "standard"');
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
      createdAt: nowTimestamp(),
    });
    const result = await this.store.createKey(scope, key);
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
    return { key, secret, usage: await readKeyUsage(this.store, key) };
  }

  private async findKey(hash: string): Promise<{ scope: string; key: ApiKey }> {
    if (!isKeyHash(hash)) throw invalidArgument("hash must be 64 lowercase hex characters");
    const scope = await this.store.keyScope(hash);
    const key = scope === undefined ? undefined : await this.store.getKey(scope, hash);
    if (scope === undefined || !key)
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(hash)} not found`);
    return { scope, key };
  }

  async getKey(req: { hash: string }) {
    const { key } = await this.findKey(req.hash);
    return { key, usage: await readKeyUsage(this.store, key) };
  }

  async listKeys(req: {
    workspaceId?: string;
    offset: number;
    limit: number;
    includeDisabled: boolean;
  }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const scope =
      req.workspaceId === undefined ? undefined : (await this.workspace(req.workspaceId)).id;
    // The store pages the enabled keys from an index of their own.
    const page = await this.store.listKeys(scope, offset, limit, !req.includeDisabled);
    const now = new Date();
    const usages = await Promise.all(page.items.map((k) => readKeyUsage(this.store, k, now)));
    return { keys: page.items, totalCount: page.total, usages };
  }

  async updateKey(req: UpdateKeyRequest) {
    const paths = req.updateMask?.paths ?? [];
    checkUpdateMask(UpdateKeyRequestSchema, req, paths, [
      "name",
      "disabled",
      "limit",
      "rate_limit_per_minute",
    ]);
    const { scope, key } = await this.findKey(req.hash);
    for (const path of paths) {
      if (path === "name") {
        if (req.name === undefined) throw invalidArgument("name cannot be null");
        checkName("name", req.name);
        key.name = req.name;
      } else if (path === "disabled") {
        if (req.disabled === undefined) throw invalidArgument("disabled must be true or false");
        key.disabled = req.disabled;
      } else if (path === "limit") {
        checkLimit(req.limit);
        key.limit = req.limit;
      } else if (path === "rate_limit_per_minute") {
        checkRateLimit(req.rateLimitPerMinute);
        key.rateLimitPerMinute = req.rateLimitPerMinute;
      } else {
        throw invalidArgument(`${quote(path)} is not an updatable key field`);
      }
    }
    key.updatedAt = nowTimestamp();
    if (!(await this.store.putKey(scope, key)))
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.hash)} not found`);
    return { key, usage: await readKeyUsage(this.store, key) };
  }

  async deleteKey(req: { hash: string }) {
    const { scope } = await this.findKey(req.hash);
    if (!(await this.store.deleteKey(scope, req.hash)))
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.hash)} not found`);
    return { deleted: true };
  }

  /** The caller, as the authentication interceptor resolved it from the call's metadata. */
  async authenticate(_req: unknown, ctx: HandlerContext) {
    return { key: callerOf(ctx).principal.key };
  }

  /** The calling key (any kind) and what it spent: OpenRouter's GET /key. */
  async getCurrentKey(_req: unknown, ctx: HandlerContext) {
    const { key } = callerOf(ctx).principal;
    const [usage, allowedDataRegions] = await Promise.all([
      readKeyUsage(this.store, key),
      keyRegions(this.store, key.hash),
    ]);
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

  async addCredits(req: { workspaceId: string; amountUsd: number }) {
    const ws = await this.workspace(req.workspaceId);
    return { workspaceId: ws.id, balanceUsd: await addCredits(this.store, ws.id, req.amountUsd) };
  }

  async *watchInvalidations(_req: unknown, ctx: HandlerContext) {
    for await (const scope of invalidationStream(this.store, ctx.signal)) yield { scope };
  }
}
