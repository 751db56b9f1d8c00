import { type Timestamp, timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { AUDIT_RESOURCE_TYPES } from "../../domain/audit.js";
import { KEY_LIMIT_RESETS, REPLAY_DATA_MODES } from "../../domain/enums.js";
import { isKeyHash, isUuid } from "../../domain/ids.js";
import { ACCOUNT_LIMITS, AUDIT_LIMITS } from "../../domain/limits.js";
import { page } from "../../domain/paging.js";
import { REPLAY_DATA_DAYS_MAX } from "../../domain/replay-data.js";
import { isSlug, slugify } from "../../domain/slug.js";
import {
  KeyKind,
  type KeyLimitReset,
  ReplayData,
} from "../../gen/railgate/account/v1/account_pb.js";
import {
  AccountService,
  UpdateKeyRequestSchema,
  UpdateWorkspaceRequestSchema,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import { quote } from "../../platform/quote.js";
import {
  cursorPage,
  fail,
  noRule,
  type RequestRules,
  withRequestRules,
} from "../../platform/rpc/request-rules.js";
import { type UpdateMaskRules, walkUpdateMask } from "../../platform/rpc/update-mask.js";
import { decodeCursor } from "./audit-cursor.js";

/**
 * The account service's input rules, one per RPC, in the shape every service
 * states them (platform/rpc/request-rules.ts): every call is checked before its
 * handler runs, so a plain gRPC client and the gateway get the same refusal.
 * What needs the store (does the workspace or key exist, is the default
 * workspace still there) is checked by the handler.
 */

const NAME_MAX = ACCOUNT_LIMITS.nameMax;
const DESCRIPTION_MAX = ACCOUNT_LIMITS.descriptionMax;
const MEMBER_ID_MAX = ACCOUNT_LIMITS.memberIdMax;
const RATE_LIMIT_MAX = ACCOUNT_LIMITS.rateLimitPerMinuteMax;
const TOP_UP_MAX = ACCOUNT_LIMITS.topUpUsdMax;

/** The longest answer a gateway stores under an Idempotency-Key (a management answer is small). */
const IDEMPOTENT_ANSWER_MAX_CHARS = 1024 * 1024;

/** An Idempotency-Key claim's token, as the store made it. */
function token(value: string): void {
  if (!isUuid(value)) fail("token must be the claim's token (a UUID)");
}

function name(field: string, value: string): void {
  if (value.trim().length === 0 || [...value].length > NAME_MAX) {
    fail(`${field} must be 1 to ${NAME_MAX} characters and not blank`);
  }
}

function description(value: string): void {
  if ([...value].length > DESCRIPTION_MAX) {
    fail(`description must be at most ${DESCRIPTION_MAX} characters`);
  }
}

function rateLimit(v: number | undefined): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > RATE_LIMIT_MAX)) {
    fail(`rate_limit_per_minute must be an integer from 1 to ${RATE_LIMIT_MAX} or null`);
  }
}

function limit(v: number | undefined): void {
  if (v !== undefined && (!Number.isFinite(v) || v < 0)) {
    fail("limit must be a number >= 0 (USD) or null");
  }
}

function limitReset(v: KeyLimitReset | undefined): void {
  if (v !== undefined && KEY_LIMIT_RESETS.name(v) === undefined) {
    fail(`limit_reset must be ${KEY_LIMIT_RESETS.quoted} or null`);
  }
}

/** What a workspace's records keep for a what-if replay; unset leaves it as it is. */
function replayData(v: ReplayData | undefined): void {
  if (
    v !== undefined &&
    (v === ReplayData.UNSPECIFIED || REPLAY_DATA_MODES.name(v) === undefined)
  ) {
    fail(`replay_data must be ${REPLAY_DATA_MODES.quoted}`);
  }
}

function replayDataDays(v: number | undefined): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > REPLAY_DATA_DAYS_MAX)) {
    fail(`replay_data_days must be an integer from 1 to ${REPLAY_DATA_DAYS_MAX}`);
  }
}

/** A key cannot be created (or extended) already expired: that would be a key nobody can use. */
function expiresAt(at: Timestamp | undefined, nowMs = Date.now()): void {
  if (at !== undefined && timestampMs(at) <= nowMs) {
    fail(
      `expires_at must be in the future (got ${timestampDate(at).toISOString()}; now is ${new Date(nowMs).toISOString()})`,
    );
  }
}

/** The user ids of an add or remove of workspace members. */
function memberUserIds(userIds: readonly string[]): void {
  const max = ACCOUNT_LIMITS.membersPerCallMax;
  if (userIds.length === 0 || userIds.length > max) {
    fail(`user_ids must hold 1 to ${max} user ids`);
  }
  userIds.forEach((u, i) => {
    if (u.trim().length === 0 || [...u].length > MEMBER_ID_MAX) {
      fail(`user_ids[${i}] must be 1 to ${MEMBER_ID_MAX} characters and not blank`);
    }
  });
}

function keyHash(hash: string): void {
  if (!isKeyHash(hash)) fail("hash must be 64 lowercase hex characters");
}

const WORKSPACE_UPDATE: UpdateMaskRules<typeof UpdateWorkspaceRequestSchema> = {
  values: UpdateWorkspaceRequestSchema,
  identity: ["id", "update_mask"],
  paths: {
    name(req) {
      if (req.name === undefined) fail("name cannot be null");
      name("name", req.name);
    },
    slug(req) {
      if (req.slug === undefined || !isSlug(req.slug)) {
        fail(
          `slug must be 1 to ${ACCOUNT_LIMITS.slugMax} lowercase letters, digits or inner hyphens`,
        );
      }
    },
    description: (req) => description(req.description ?? ""),
    audio_cache(req) {
      if (req.audioCache === undefined) fail("audio_cache cannot be null");
    },
    replay_data(req) {
      if (req.replayData === undefined) fail("replay_data cannot be null");
      replayData(req.replayData);
    },
    replay_data_days(req) {
      if (req.replayDataDays === undefined) fail("replay_data_days cannot be null");
      replayDataDays(req.replayDataDays);
    },
  },
  notUpdatable: (path) => `${quote(path)} is not an updatable workspace field`,
};

const KEY_UPDATE: UpdateMaskRules<typeof UpdateKeyRequestSchema> = {
  values: UpdateKeyRequestSchema,
  identity: ["hash", "update_mask"],
  paths: {
    name(req) {
      if (req.name === undefined) fail("name cannot be null");
      name("name", req.name);
    },
    disabled(req) {
      if (req.disabled === undefined) fail("disabled must be true or false");
    },
    limit: (req) => limit(req.limit),
    rate_limit_per_minute: (req) => rateLimit(req.rateLimitPerMinute),
    limit_reset: (req) => limitReset(req.limitReset),
    expires_at: (req) => expiresAt(req.expiresAt),
    include_byok_in_limit(req) {
      if (req.includeByokInLimit === undefined) fail("include_byok_in_limit must be true or false");
    },
  },
  notUpdatable: (path) => `${quote(path)} is not an updatable key field`,
};

const AUDIT_ACTION = /^[a-z][a-z_]*\.[a-z][a-z_]*$/;

function instant(field: string, t: Timestamp | undefined): number | undefined {
  if (!t) return undefined;
  const ms = timestampDate(t).getTime();
  if (Number.isNaN(ms)) fail(`${field} is not a valid instant`);
  return ms;
}

export const ACCOUNT_REQUEST_RULES: RequestRules<typeof AccountService> = {
  createWorkspace(req) {
    name("name", req.name);
    if (!isSlug(req.slug || slugify(req.name))) {
      fail(
        `slug must be 1 to ${ACCOUNT_LIMITS.slugMax} lowercase letters, digits or inner hyphens (derive it from a name with letters, or pass one)`,
      );
    }
    description(req.description);
    replayData(req.replayData);
    replayDataDays(req.replayDataDays);
  },
  // An id or a slug: either names a workspace or it is not found.
  getWorkspace: noRule,
  listWorkspaces: page,
  updateWorkspace: (req) => walkUpdateMask(WORKSPACE_UPDATE, req, req.updateMask?.paths ?? []),
  deleteWorkspace: noRule,
  listWorkspaceMembers: page,
  addWorkspaceMembers: (req) => memberUserIds(req.userIds),
  removeWorkspaceMembers: (req) => memberUserIds(req.userIds),
  createKey(req) {
    name("name", req.name);
    limit(req.limit);
    limitReset(req.limitReset);
    expiresAt(req.expiresAt);
    rateLimit(req.rateLimitPerMinute);
    if (req.memberUserId.length > MEMBER_ID_MAX) {
      fail(`member_user_id must be at most ${MEMBER_ID_MAX} characters`);
    }
    if (req.kind === KeyKind.MANAGEMENT) {
      if (req.workspaceId) fail("workspace_id is not allowed for management keys");
      if (req.memberUserId) fail("member_user_id is not allowed for management keys");
    } else if (req.kind !== KeyKind.STANDARD) {
      fail('kind must be "management" or "standard"');
    }
  },
  getKey: (req) => keyHash(req.hash),
  listKeys(req) {
    page(req);
    if (req.q.length > ACCOUNT_LIMITS.searchMax)
      fail(`q must be at most ${ACCOUNT_LIMITS.searchMax} characters`);
  },
  updateKey(req) {
    keyHash(req.hash);
    walkUpdateMask(KEY_UPDATE, req, req.updateMask?.paths ?? []);
  },
  deleteKey: (req) => keyHash(req.hash),
  // Who the caller is comes from the call's metadata, not from the request.
  authenticate: noRule,
  getCurrentKey: noRule,
  // The organization's totals when empty, else an id or a slug (found or not found).
  getCredits: noRule,
  addCredits(req) {
    const amount = req.amountUsd;
    if (!Number.isFinite(amount) || amount === 0 || Math.abs(amount) > TOP_UP_MAX) {
      fail(`amount_usd must be a non-zero number from -${TOP_UP_MAX} to ${TOP_UP_MAX}`);
    }
  },
  claimIdempotencyKey(req) {
    if (!/^[0-9a-f]{64}$/.test(req.fingerprint))
      fail("fingerprint must be 64 lowercase hex digits");
  },
  completeIdempotencyKey(req) {
    token(req.token);
    if (!Number.isInteger(req.status) || req.status < 100 || req.status > 599)
      fail("status must be an HTTP status from 100 to 599");
    if (req.body.length > IDEMPOTENT_ANSWER_MAX_CHARS)
      fail(`body must be at most ${IDEMPOTENT_ANSWER_MAX_CHARS} characters`);
  },
  releaseIdempotencyKey: (req) => token(req.token),
  listAuditEvents(req) {
    if (
      req.action &&
      (req.action.length > AUDIT_LIMITS.actionMax || !AUDIT_ACTION.test(req.action))
    ) {
      fail(
        `action must be <resource>.<verb> in lowercase (e.g. "key.create"), at most ${AUDIT_LIMITS.actionMax} characters`,
      );
    }
    if (
      req.resourceType &&
      !(AUDIT_RESOURCE_TYPES as readonly string[]).includes(req.resourceType)
    ) {
      fail(`resource_type must be one of ${AUDIT_RESOURCE_TYPES.map((t) => `"${t}"`).join(", ")}`);
    }
    if (req.resourceId.length > AUDIT_LIMITS.resourceIdMax) {
      fail(`resource_id must be at most ${AUDIT_LIMITS.resourceIdMax} characters`);
    }
    if (req.q.length > AUDIT_LIMITS.searchMax) {
      fail(`q must be at most ${AUDIT_LIMITS.searchMax} characters`);
    }
    if (req.actor && !isKeyHash(req.actor)) {
      fail("actor must be a key hash: 64 lowercase hex characters");
    }
    if (req.workspaceId && !isUuid(req.workspaceId)) {
      fail("workspace_id must be a workspace id (a UUID)");
    }
    const from = instant("from", req.from);
    const to = instant("to", req.to);
    if (from !== undefined && to !== undefined && from >= to) {
      fail("from must be before to (from is inclusive, to exclusive)");
    }
    cursorPage(req.limit, AUDIT_LIMITS);
    if (req.cursor) decodeCursor(req.cursor);
  },
  watchInvalidations: noRule,
};

/** The service with its rules in front of every method. */
export function checkedAccountService(
  impl: ServiceImpl<typeof AccountService>,
): ServiceImpl<typeof AccountService> {
  return withRequestRules(AccountService, impl, ACCOUNT_REQUEST_RULES);
}
