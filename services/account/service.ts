import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type ApiKey,
  ApiKeySchema,
  KeyKind,
  type Workspace,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import type {
  AccountService,
  CreateKeyRequest,
  UpdateKeyRequest,
  UpdateWorkspaceRequest,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { alreadyExists, invalidArgument, notFound, unauthenticated } from "../common/errors.js";
import {
  defaultGuardrailId,
  hashSecret,
  isKeyHash,
  isUuid,
  newId,
  newSecret,
  secretLabel,
} from "../common/ids.js";
import { pageParams } from "../common/paging.js";
import { ORG_SCOPE, type Store } from "../common/store/types.js";
import { nowTimestamp } from "../common/time.js";
import { addCredits, readCredits } from "./credits.js";
import { invalidationStream } from "./invalidations.js";
import type { OperatorKey } from "./operator-key.js";
import { isSlug, slugify } from "./slug.js";

const NAME_MAX = 100;
const DESCRIPTION_MAX = 500;
const MEMBER_ID_MAX = 256;
const MIN_OPERATOR_SECRET = 16;

function checkName(field: string, name: string): void {
  if (name.trim().length === 0 || [...name].length > NAME_MAX) {
    throw invalidArgument(`${field} must be 1 to ${NAME_MAX} characters and not blank`);
  }
}

const RATE_LIMIT_MAX = 1_000_000;

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
    /** RAILGATE_MANAGEMENT_KEY, registered again if the store lost it. */
    private readonly operatorKey?: OperatorKey,
  ) {}

  /** Resolves an id or a slug to a stored workspace, or 404. */
  private async workspace(idOrSlug: string): Promise<Workspace> {
    const id = isUuid(idOrSlug) ? idOrSlug : await this.store.workspaceIdBySlug(idOrSlug);
    const ws = id ? await this.store.getWorkspace(id) : undefined;
    if (!ws) throw notFound(`workspace ${idOrSlug.slice(0, 100)} not found`);
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
        "slug must be 1 to 64 lowercase letters, digits or inner hyphens (derive it from a name with letters, or pass one)",
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
    if ((await this.store.createWorkspace(ws)) === "slug-taken") {
      throw alreadyExists(`slug "${slug}" is already used by another workspace`);
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
    const ws = await this.workspace(req.id);
    const previousSlug = ws.slug;
    for (const path of req.updateMask?.paths ?? []) {
      if (path === "name") {
        if (req.name === undefined) throw invalidArgument("name cannot be null");
        checkName("name", req.name);
        ws.name = req.name;
      } else if (path === "slug") {
        if (req.slug === undefined || !isSlug(req.slug)) {
          throw invalidArgument("slug must be 1 to 64 lowercase letters, digits or inner hyphens");
        }
        ws.slug = req.slug;
      } else if (path === "description") {
        const d = req.description ?? "";
        if ([...d].length > DESCRIPTION_MAX) {
          throw invalidArgument(`description must be at most ${DESCRIPTION_MAX} characters`);
        }
        ws.description = d;
      } else {
        throw invalidArgument(`${path} is not an updatable workspace field`);
      }
    }
    ws.updatedAt = nowTimestamp();
    const result = await this.store.updateWorkspace(ws, previousSlug);
    if (result === "missing") throw notFound(`workspace ${req.id} not found`);
    if (result === "slug-taken")
      throw alreadyExists(`slug "${ws.slug}" is already used by another workspace`);
    return { workspace: ws };
  }

  async deleteWorkspace(req: { id: string }) {
    const ws = await this.workspace(req.id);
    if (!(await this.store.deleteWorkspace(ws.id))) throw notFound(`workspace ${req.id} not found`);
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
            throw invalidArgument(`workspace_id ${req.workspaceId} does not exist`);
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
      throw invalidArgument(`workspace_id ${scope} does not exist`);
    if (result === "exists") throw alreadyExists("key collision, retry");
    return { key, secret };
  }

  private async findKey(hash: string): Promise<{ scope: string; key: ApiKey }> {
    if (!isKeyHash(hash)) throw invalidArgument("hash must be 64 lowercase hex characters");
    const scope = await this.store.keyScope(hash);
    const key = scope === undefined ? undefined : await this.store.getKey(scope, hash);
    if (scope === undefined || !key) throw notFound(`key ${hash} not found`);
    return { scope, key };
  }

  async getKey(req: { hash: string }) {
    return { key: (await this.findKey(req.hash)).key };
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
    if (req.includeDisabled) {
      const page = await this.store.listKeys(scope, offset, limit);
      return { keys: page.items, totalCount: page.total };
    }
    // Filtering disabled keys needs the whole list; key counts per deployment are modest.
    const all = await this.store.listKeys(scope, 0, Number.MAX_SAFE_INTEGER);
    const enabled = all.items.filter((k) => !k.disabled);
    return { keys: enabled.slice(offset, offset + limit), totalCount: enabled.length };
  }

  async updateKey(req: UpdateKeyRequest) {
    const { scope, key } = await this.findKey(req.hash);
    for (const path of req.updateMask?.paths ?? []) {
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
        throw invalidArgument(`${path} is not an updatable key field`);
      }
    }
    key.updatedAt = nowTimestamp();
    if (!(await this.store.putKey(scope, key))) throw notFound(`key ${req.hash} not found`);
    return { key };
  }

  async deleteKey(req: { hash: string }) {
    const { scope } = await this.findKey(req.hash);
    if (!(await this.store.deleteKey(scope, req.hash))) throw notFound(`key ${req.hash} not found`);
    return { deleted: true };
  }

  async authenticate(req: { secret: string }) {
    if (!req.secret) throw unauthenticated("Missing API key: send Authorization: Bearer <key>");
    const hash = hashSecret(req.secret);
    const scope = await this.store.keyScope(hash);
    const key =
      (scope === undefined ? undefined : await this.store.getKey(scope, hash)) ??
      (await this.operatorKey?.recover(hash));
    if (!key) throw unauthenticated("Invalid API key");
    if (key.disabled) throw unauthenticated("API key is disabled");
    return { key };
  }

  async getCredits(req: { workspaceId: string }) {
    const ws = await this.workspace(req.workspaceId);
    return { workspaceId: ws.id, balanceUsd: await readCredits(this.store, ws.id) };
  }

  async addCredits(req: { workspaceId: string; amountUsd: number }) {
    const ws = await this.workspace(req.workspaceId);
    return { workspaceId: ws.id, balanceUsd: await addCredits(this.store, ws.id, req.amountUsd) };
  }

  async *watchInvalidations(_req: unknown, ctx: HandlerContext) {
    for await (const scope of invalidationStream(this.store, ctx.signal)) yield { scope };
  }

  async ensureManagementKey(req: { secret: string; name: string }) {
    if (req.secret.length < MIN_OPERATOR_SECRET) {
      throw invalidArgument(
        `the management key must be at least ${MIN_OPERATOR_SECRET} characters`,
      );
    }
    const hash = hashSecret(req.secret);
    const existing = await this.store.getKey(ORG_SCOPE, hash);
    if (existing) return { key: existing };
    const key = create(ApiKeySchema, {
      hash,
      name: req.name || "Operator management key",
      label: secretLabel(req.secret),
      kind: KeyKind.MANAGEMENT,
      createdAt: nowTimestamp(),
    });
    const result = await this.store.createKey(ORG_SCOPE, key);
    if (result === "exists") {
      // Another replica starting at the same moment may have registered it first.
      const raced = await this.store.getKey(ORG_SCOPE, hash);
      if (raced) return { key: raced };
      throw alreadyExists("that secret is already in use by a standard key");
    }
    return { key };
  }
}
