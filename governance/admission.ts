import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { CatalogEndpoint } from "../domain/catalog/types.js";
import { keyLimitWindow, RESET_INTERVALS } from "../domain/enums.js";
import { newId } from "../domain/ids.js";
import { admissionRefusals } from "../domain/metrics.js";
import { type RateWindowState, rateLimitHeaderValues } from "../domain/rate-limit-headers.js";
import type { WindowInterval } from "../domain/windows.js";
import { budgetDays } from "../domain/windows.js";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { BudgetRefusalSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { withReason } from "../platform/rpc/errors.js";
import { type Admission, rateWindowRemainingMs, type Settlement } from "../store/admission.js";
import { keyLimitCounter } from "../store/key-usage.js";
import type { Recovery } from "../store/reservations.js";
import type { Store } from "../store/types.js";
import { markBudgetRefusal, markDecidedBy } from "./decided-by.js";
import type { Principal } from "./governance-cache.js";
import { type BudgetScope, budgetCounters } from "./policy/budget-counters.js";
import { fromMicros, toMicros } from "./policy/money.js";

const RATE_WINDOW_MS = 60_000;
/** A window in the words of a refusal ("per day"); a window added to the enum must be named here. */
const PERIOD: Readonly<Record<WindowInterval, string>> = {
  daily: "day",
  weekly: "week",
  monthly: "month",
};

/** Whose budget refused, in the words of the refusal. */
function budgetOwner(scope: BudgetScope | undefined, memberUserId: string): string {
  return scope === "member" || scope === "workspace_default_member"
    ? `member "${memberUserId}" (all of the member's keys)`
    : "this API key";
}

export interface MeteringConfig {
  /** Requests per minute per key; 0 = unlimited. */
  rateLimitPerMinute: number;
}

function costMicros(characters: number, pricePerMillion: number): number {
  return toMicros((characters * pricePerMillion) / 1_000_000);
}

function usd(micros: number): string {
  return `$${fromMicros(micros)
    .toFixed(6)
    .replace(/0{1,4}$/, "")}`;
}

/**
 * Reserves the request's worst case (the most expensive eligible endpoint)
 * against the key's rate limit, the workspace credits, every budget counter
 * of the key and of its member, and the key's own limit, atomically in the
 * store: concurrent requests on any number of replicas can never overshoot a
 * limit. BYOK spend counts toward a budget only when its guardrail says
 * include_byok_in_budgets, toward the key's limit only when the key says
 * include_byok_in_limit, and never toward credits.
 */
export async function admitRequest(
  store: Store,
  principal: Principal,
  characters: number,
  endpoints: CatalogEndpoint[],
  config: MeteringConfig,
  now = new Date(),
  recovery?: Recovery,
): Promise<{ admission: Admission; metered: boolean; rate?: RateWindowState }> {
  const worst = (byok: boolean) =>
    Math.max(
      0,
      ...endpoints
        .filter((e) => byok || !e.byok)
        .map((e) => costMicros(characters, e.pricePerMillionChars)),
    );
  const worstAll = worst(true);
  const worstCredit = worst(false);
  const key = principal.key;
  // Per entity: the key's own counters, and its member's (budget-counters.ts).
  const counters = budgetCounters(principal.policy.budgets, key.hash, key.memberUserId).filter(
    (c) => c.budget.includeByok || endpoints.some((e) => !e.byok),
  );
  // A key limit with limit_reset counts the spend of its current UTC window only.
  const limitWindow = key.limit === undefined ? undefined : keyLimitWindow(key.limitReset);
  const byokInLimit = key.includeByokInLimit && key.limit !== undefined;
  // A key's own rate_limit_per_minute replaces the system-wide default.
  const rateLimit = key.rateLimitPerMinute ?? config.rateLimitPerMinute;
  const admission: Admission = {
    // Settling twice (a retried settlement that had in fact been applied) is a no-op by id.
    id: newId(),
    scope: principal.scope,
    keyHash: key.hash,
    rate:
      rateLimit > 0
        ? { limit: rateLimit, windowMs: RATE_WINDOW_MS, nowMs: now.getTime() }
        : undefined,
    creditMicros: worstCredit,
    keyLimitMicros: key.limit === undefined ? undefined : toMicros(key.limit),
    keyLimitWindow: limitWindow && keyLimitCounter(key.hash, limitWindow, now),
    // include_byok_in_limit: the limit has a say over BYOK endpoints too, so their worst case
    // is reserved on it (settlement keeps the credit part there and moves the rest to BYOK).
    keyLimitIncludesByok: byokInLimit,
    keyMicros: byokInLimit ? worstAll : worstCredit,
    // A budget that leaves BYOK spend out has no say over a request only BYOK endpoints can
    // serve (not even a limit_usd of 0, which otherwise refuses everything).
    budgets: counters.map(({ budget: b, entity }) => {
      const window = budgetDays(b.interval, now);
      return {
        guardrailId: b.guardrailId,
        entity,
        firstDay: window.firstDay,
        day: window.today,
        limitMicros: toMicros(b.limitUsd),
        amountMicros: b.includeByok ? worstAll : worstCredit,
      };
    }),
    recovery,
  };
  const result = await store.admit(admission);
  if (result.ok) {
    const rate =
      admission.rate && result.rateUsed !== undefined
        ? {
            limit: rateLimit,
            remaining: rateLimit - result.rateUsed,
            resetSeconds: Math.ceil(rateWindowRemainingMs(admission.rate) / 1000),
          }
        : undefined;
    return rate
      ? { admission, metered: result.metered, rate }
      : { admission, metered: result.metered };
  }
  admissionRefusals.labels(result.reason).inc();
  switch (result.reason) {
    case "rate-limit": {
      const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      const err = withReason(
        Code.ResourceExhausted,
        ErrorReason.RATE_LIMITED,
        `Rate limit exceeded: ${rateLimit} requests per minute for this key; retry in ${seconds} s`,
        seconds,
      );
      // The refusal carries the window too, so a client reads one set of fields either way.
      for (const [name, value] of rateLimitHeaderValues({
        limit: rateLimit,
        remaining: 0,
        resetSeconds: seconds,
      }))
        err.metadata.set(name, value);
      throw err;
    }
    case "credits":
      throw withReason(
        Code.FailedPrecondition,
        ErrorReason.INSUFFICIENT_CREDITS,
        `Insufficient credits: this request may cost up to ${usd(worstCredit)} and the workspace has ${usd(result.balanceMicros)} left`,
      );
    case "key-limit":
      // OpenRouter answers a key over its own limit with 403 "Key limit exceeded".
      throw withReason(
        Code.PermissionDenied,
        ErrorReason.KEY_LIMIT_EXCEEDED,
        `Key limit exceeded: ${usd(result.spentMicros)} of the key's limit of ${usd(admission.keyLimitMicros ?? 0)}${limitWindow ? ` per ${PERIOD[limitWindow]} (limit_reset: ${limitWindow}, UTC)` : ""} used${admission.keyLimitIncludesByok ? " (credit and BYOK spend: include_byok_in_limit)" : ""}`,
      );
    case "budget": {
      const c = counters.find(
        (x) => x.budget.guardrailId === result.guardrailId && x.entity === result.entity,
      );
      const b = c?.budget;
      const member = c?.scope === "member" || c?.scope === "workspace_default_member";
      const asked = admission.budgets.find(
        (x) => x.guardrailId === result.guardrailId && x.entity === result.entity,
      );
      const err = withReason(
        Code.PermissionDenied,
        ErrorReason.BUDGET_EXCEEDED,
        `Budget of ${b?.policy ? "policy" : "guardrail"} "${b?.guardrailName ?? result.guardrailId}" (${result.guardrailId}) exhausted for ${budgetOwner(c?.scope, key.memberUserId)}: ${usd(result.spentMicros)} of $${b?.limitUsd ?? 0} per ${PERIOD[b?.interval ?? "daily"]} used (limit_usd)`,
      );
      markBudgetRefusal(
        err,
        create(BudgetRefusalSchema, {
          guardrailId: result.guardrailId,
          guardrailName: b?.guardrailName ?? "",
          policy: b?.policy === true,
          interval: RESET_INTERVALS.value(b?.interval ?? "daily"),
          scope: member ? "member" : "key",
          memberUserId: member ? key.memberUserId : "",
          spentUsd: fromMicros(result.spentMicros),
          limitUsd: b?.limitUsd ?? 0,
          requestUsd: fromMicros(asked?.amountMicros ?? 0),
        }),
      );
      throw markDecidedBy(err, {
        guardrailId: result.guardrailId,
        ...(b?.policy ? { policy: true as const } : {}),
      });
    }
  }
}

/**
 * What the request really cost on the endpoint that served it (nothing if none produced audio),
 * for the characters it is billed for (see `billedCharacters`).
 */
export function settlement(
  admission: Admission,
  principal: Principal,
  characters: number,
  served: CatalogEndpoint | undefined,
): Settlement {
  const cost = served ? costMicros(characters, served.pricePerMillionChars) : 0;
  const credit = served && !served.byok ? cost : 0;
  return {
    creditMicros: credit,
    keyMicros: credit,
    byokMicros: cost - credit,
    budgets: admission.budgets.map((b) => {
      const spec = principal.policy.budgets.find((x) => x.guardrailId === b.guardrailId);
      return {
        guardrailId: b.guardrailId,
        entity: b.entity,
        amountMicros: spec?.includeByok ? cost : credit,
      };
    }),
  };
}
