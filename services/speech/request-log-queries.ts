import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../domain/auth/caller-auth.js";
import { FILTER_ACTIONS, GENERATION_STATUSES } from "../../domain/enums.js";
import { isKeyHash, isUuid } from "../../domain/ids.js";
import { USAGE_GROUPS, type UsageGroup } from "../../domain/usage-groups.js";
import { KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  ActivityItemSchema,
  type GetActivityRequest,
  type GetUsageRequest,
  type ListGenerationsRequest,
  UsagePointSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Principal } from "../../governance/governance-cache.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument, notFound, permissionDenied } from "../../platform/rpc/errors.js";
import {
  BadCursor,
  decodeCursor,
  encodeCursor,
  type ListQuery,
  type LogScope,
} from "../../store/request-log/generations.js";
import type { Store } from "../../store/types.js";
import type { GenerationLog } from "./generations.js";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** OpenRouter's activity covers the last 30 completed UTC days. */
const ACTIVITY_DAYS = 30;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
/** A refusal reason as records name them: an ErrorReason's or a gRPC code's name in lower case. */
const REFUSAL_REASON = /^[a-z][a-z_]{0,63}$/;
const MAX_SEARCH_CHARS = 200;
/** A search by key name looks at the records of at most this many matching keys. */
const MAX_SEARCH_KEYS = 200;
const KEY_PAGE = 500;
/** ...and reads at most this many keys to find them. */
const MAX_KEYS_READ = 10_000;
/** Buckets one usage query may span at most: 31 days of hours, or about 13 months of days. */
const MAX_BUCKETS = { hour: 31 * 24, day: 400 } as const;

function isManagement(p: Principal): boolean {
  return p.key.kind === KeyKind.MANAGEMENT;
}

/**
 * What the caller may read: a management key every workspace's records (or the one it names);
 * a standard key only the records made with it, whatever it asks for.
 */
export function logScope(principal: Principal, workspaceId: string): LogScope {
  if (workspaceId && !isUuid(workspaceId))
    throw invalidArgument(
      `workspace_id must be a workspace id (a UUID), got ${quote(workspaceId)}`,
    );
  if (isManagement(principal)) return workspaceId ? { workspaceId } : {};
  if (workspaceId && workspaceId !== principal.scope) {
    throw permissionDenied(
      ErrorReason.MANAGEMENT_KEY_REQUIRED,
      "workspace_id names another workspace: only a management key reads other workspaces' records",
    );
  }
  return { workspaceId: principal.scope, keyHash: principal.key.hash };
}

function ms(ts: { seconds: bigint; nanos: number } | undefined): number | undefined {
  return ts ? timestampMs(ts as Parameters<typeof timestampMs>[0]) : undefined;
}

function checkRange(fromMs: number | undefined, toMs: number | undefined): void {
  if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs)
    throw invalidArgument("from must be before to");
}

/** The request-log RPCs of SpeechService: lists, activity and usage series, and labels. */
export class RequestLogQueries {
  constructor(
    private readonly log: GenerationLog,
    private readonly store: Store,
  ) {}

  async get(id: string, ctx: HandlerContext) {
    if (!id) throw invalidArgument("id is required");
    const { principal } = callerOf<Principal>(ctx);
    // GET /generation: any key of the record's workspace (as before), a management key any.
    const scope: LogScope = isManagement(principal) ? {} : { workspaceId: principal.scope };
    const generation = await this.log.get(id, scope);
    if (!generation)
      throw notFound(ErrorReason.GENERATION_NOT_FOUND, `generation ${id.slice(0, 80)} not found`);
    return { generation };
  }

  async list(req: ListGenerationsRequest, ctx: HandlerContext) {
    const { principal } = callerOf<Principal>(ctx);
    const scope = logScope(principal, req.workspaceId);
    if (req.limit < 0 || req.limit > MAX_LIMIT)
      throw invalidArgument(`limit must be from 1 to ${MAX_LIMIT}, got ${req.limit}`);
    if (req.keyHash && !isKeyHash(req.keyHash))
      throw invalidArgument("key_hash must be 64 lowercase hex characters");
    // UNSPECIFIED is "any"; a number the enum has no value for is refused, not read as any.
    if (req.status && GENERATION_STATUSES.name(req.status) === undefined)
      throw invalidArgument(
        `status must be a GenerationStatus (${GENERATION_STATUSES.names.join(", ")}), got ${req.status}`,
      );
    if (req.outcome && FILTER_ACTIONS.name(req.outcome) === undefined)
      throw invalidArgument(
        `outcome must be a FilterAction (${FILTER_ACTIONS.names.join(", ")}), got ${req.outcome}`,
      );
    const fromMs = ms(req.from);
    const toMs = ms(req.to);
    checkRange(fromMs, toMs);
    let cursor: ReturnType<typeof decodeCursor> | undefined;
    try {
      cursor = req.cursor ? decodeCursor(req.cursor) : undefined;
    } catch (err) {
      if (err instanceof BadCursor) throw invalidArgument(err.message);
      throw err;
    }
    if (req.refusalReason && !REFUSAL_REASON.test(req.refusalReason))
      throw invalidArgument(
        `refusal_reason must be a refusal reason in lower case (budget_exceeded, rate_limited, ...), got ${quote(req.refusalReason)}`,
      );
    const text = req.q.trim();
    if (text.length > MAX_SEARCH_CHARS)
      throw invalidArgument(`q must be at most ${MAX_SEARCH_CHARS} characters, got ${text.length}`);
    // A standard key's own hash is part of its scope; a different key_hash then matches nothing.
    if (scope.keyHash && req.keyHash && req.keyHash !== scope.keyHash)
      return { generations: [], nextCursor: "", totalCount: 0n, totalCountIsEstimate: false };
    const query: ListQuery = {
      ...scope,
      keyHash: scope.keyHash ?? (req.keyHash || undefined),
      limit: req.limit || DEFAULT_LIMIT,
      cursor,
      model: req.model || undefined,
      provider: req.provider || undefined,
      status: req.status || undefined,
      outcome: req.outcome || undefined,
      guardrailId: req.guardrailId || undefined,
      refusalReason: req.refusalReason || undefined,
      policyId: req.policyId || undefined,
      fromMs,
      toMs,
      search: text ? { text, keyHashes: await this.keysNamed(text, scope) } : undefined,
    };
    const page = await this.log.list(query);
    const count = await this.log.count(query);
    return {
      generations: page.items,
      nextCursor: page.next ? encodeCursor(page.next) : "",
      totalCount: BigInt(count.total),
      totalCountIsEstimate: count.estimate,
    };
  }

  /**
   * The keys in scope whose names contain `text` (case-insensitive), at most MAX_SEARCH_KEYS: a
   * search by key name looks for their records. A standard key searches its own records only.
   */
  private async keysNamed(text: string, scope: LogScope): Promise<string[]> {
    if (scope.keyHash) return [];
    const wanted = text.toLowerCase();
    const found: string[] = [];
    for (
      let offset = 0;
      found.length < MAX_SEARCH_KEYS && offset < MAX_KEYS_READ;
      offset += KEY_PAGE
    ) {
      const page = await this.store.listKeys(scope.workspaceId, offset, KEY_PAGE);
      for (const k of page.items) if (k.name.toLowerCase().includes(wanted)) found.push(k.hash);
      if (page.items.length < KEY_PAGE || offset + KEY_PAGE >= page.total) break;
    }
    return found.slice(0, MAX_SEARCH_KEYS);
  }

  async activity(req: GetActivityRequest, ctx: HandlerContext, nowMs: number) {
    const { principal } = callerOf<Principal>(ctx);
    const scope = logScope(principal, req.workspaceId);
    // The last 30 completed UTC days, as OpenRouter counts them; or one of them.
    const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
    let fromMs = today - ACTIVITY_DAYS * DAY_MS;
    let toMs = today;
    if (req.date) {
      const day = /^\d{4}-\d{2}-\d{2}$/.test(req.date) ? Date.parse(`${req.date}T00:00:00Z`) : NaN;
      if (Number.isNaN(day))
        throw invalidArgument(`date must be a day as YYYY-MM-DD, got ${quote(req.date)}`);
      if (day < fromMs || day >= toMs) {
        throw invalidArgument(
          `date must be one of the last ${ACTIVITY_DAYS} completed UTC days (${new Date(fromMs).toISOString().slice(0, 10)} to ${new Date(toMs - DAY_MS).toISOString().slice(0, 10)}), got ${quote(req.date)}`,
        );
      }
      fromMs = day;
      toMs = day + DAY_MS;
    }
    if (req.keyHash && !isKeyHash(req.keyHash))
      throw invalidArgument("key_hash must be 64 lowercase hex characters");
    if (scope.keyHash && req.keyHash && req.keyHash !== scope.keyHash) return { items: [] };
    const rows = await this.log.activity(
      { ...scope, keyHash: scope.keyHash ?? (req.keyHash || undefined) },
      fromMs,
      toMs,
      req.byWorkspace,
    );
    return {
      items: rows.map((r) =>
        create(ActivityItemSchema, {
          date: r.date,
          workspaceId: r.workspaceId ?? "",
          model: r.model,
          provider: r.provider,
          usage: r.usage,
          byokUsage: r.byokUsage,
          requests: BigInt(r.requests),
          characters: BigInt(r.characters),
        }),
      ),
    };
  }

  async usage(req: GetUsageRequest, ctx: HandlerContext, nowMs: number) {
    const { principal } = callerOf<Principal>(ctx);
    const scope = logScope(principal, req.workspaceId);
    const granularity = req.granularity || "day";
    if (granularity !== "hour" && granularity !== "day")
      throw invalidArgument(`granularity must be hour or day, got ${quote(req.granularity)}`);
    const group = (req.groupBy || "model") as UsageGroup;
    if (!(USAGE_GROUPS as readonly string[]).includes(group)) {
      throw invalidArgument(
        `group_by must be one of ${USAGE_GROUPS.join(", ")}, got ${quote(req.groupBy)}`,
      );
    }
    const unit = granularity === "hour" ? HOUR_MS : DAY_MS;
    const toMs = ms(req.to) ?? nowMs;
    // Default span: the last 48 hours, or the last 30 days.
    const fromMs = ms(req.from) ?? toMs - (granularity === "hour" ? 48 * HOUR_MS : 30 * DAY_MS);
    checkRange(fromMs, toMs);
    if ((toMs - fromMs) / unit > MAX_BUCKETS[granularity]) {
      throw invalidArgument(
        `from: a ${granularity} series spans at most ${MAX_BUCKETS[granularity]} ${granularity}s; narrow from and to`,
      );
    }
    const rows = await this.log.usage(scope, granularity, group, fromMs, toMs);
    const labels = await this.labels(group, [...new Set(rows.map((r) => r.group))]);
    return {
      points: rows.map((r) =>
        create(UsagePointSchema, {
          bucket: timestampFromMs(r.bucketMs),
          group: r.group,
          label: labels.get(r.group),
          requests: BigInt(r.requests),
          spendUsd: r.spendUsd,
          ttfbP50Ms: r.ttfbP50Ms ?? undefined,
          ttfbP95Ms: r.ttfbP95Ms ?? undefined,
          blocked: BigInt(r.blocked),
          redacted: BigInt(r.redacted),
          flagged: BigInt(r.flagged),
          refused: BigInt(Object.values(r.refusedByReason).reduce((n, c) => n + c, 0)),
          refusedByReason: Object.fromEntries(
            Object.entries(r.refusedByReason).map(([reason, n]) => [reason, BigInt(n)]),
          ),
        }),
      ),
    };
  }

  /** People's names for the groups that have one (keys, guardrails, workspaces), from the store. */
  private async labels(group: UsageGroup, values: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const named = async (value: string): Promise<string | undefined> => {
      if (!value) return undefined;
      if (group === "workspace") return (await this.store.getWorkspace(value))?.name;
      if (group === "guardrail") {
        const ws = await this.store.guardrailWorkspace(value);
        return ws ? (await this.store.getGuardrail(ws, value))?.value.name : undefined;
      }
      if (group === "key") {
        const scope = await this.store.keyScope(value);
        return scope ? (await this.store.getKey(scope, value))?.name : undefined;
      }
      return undefined;
    };
    if (group !== "workspace" && group !== "guardrail" && group !== "key") return out;
    await Promise.all(
      values.map(async (v) => {
        const name = await named(v);
        if (name) out.set(v, name);
      }),
    );
    return out;
  }
}
