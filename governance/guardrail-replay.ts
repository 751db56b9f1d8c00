import { create } from "@bufbuild/protobuf";
import type { ModelCatalog } from "../domain/catalog/model-catalog.js";
import type { CatalogEndpoint, CatalogModel } from "../domain/catalog/types.js";
import type { RegionName } from "../domain/enums.js";
import { budgetWindow } from "../domain/windows.js";
import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { ModelSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { budgetCounters } from "./policy/budget-counters.js";
import { effectivePolicy } from "./policy/effective-policy.js";
import { toMicros } from "./policy/money.js";
import type { AccountSettings, EffectivePolicy, GuardrailSource } from "./policy/types.js";
import { modelRefusal, POLICY_RULE_KINDS, policyRules } from "./policy-rules.js";

const DAY_MS = 86_400_000;

/** The rule a replayed request would be refused by. */
export type ReplayRule =
  | "budget"
  | "model"
  | "provider"
  | "region"
  | "zdr"
  | "data_policy"
  | "content";

/** A recorded request as a replay reads it (the request log's columns, nothing decoded). */
export interface RecordedRequest {
  id: string;
  atMs: number;
  keyHash: string;
  /** The key's member, when it has one: member budgets count the member's keys together. */
  memberUserId: string;
  /** How the replayed guardrail governed the request. */
  source: GuardrailSource;
  model: string;
  /** Empty when no endpoint was chosen (refused before routing). */
  provider: string;
  /** "served" (an endpoint was given the request), or "refused" by a rule. */
  outcome: "served" | "refused";
  /** The refusal's reason name ("budget_exceeded", ...) when refused. */
  refusalReason: string;
  /** The guardrail that decided the recorded outcome, when one did. */
  decidedBy: string;
  byok: boolean;
  costUsd: number;
  characters: number;
  region: RegionName | undefined;
  /** The served endpoint's data policy as the catalog had it; undefined when none served. */
  endpointPolicy: CatalogEndpoint["dataPolicy"] | undefined;
}

/** The recorded refusal reasons a guardrail's own rules give, by the rule that gives them. */
const RULE_OF_REASON: Readonly<Record<string, ReplayRule>> = {
  budget_exceeded: "budget",
  model_not_allowed: "model",
  model_ignored: "model",
  region_not_allowed: "region",
  no_allowed_endpoint: "provider",
  content_blocked: "content",
  prompt_injection_blocked: "content",
};

/** How one request comes out of the replay. */
export interface ReplayedRequest {
  /** The recorded outcome: allowed, or refused by a rule of this guardrail, or by anything else. */
  before: { allowed: true } | { allowed: false; rule: ReplayRule | "other" };
  after: { allowed: true } | { allowed: false; rule: ReplayRule | "other" };
  /** What the request cost as recorded, and what it would cost under the proposed version (USD). */
  recordedUsd: number;
  replayedUsd: number;
}

/**
 * Decides recorded requests, in the order they were made, under a proposed version of one
 * guardrail: its region, model, provider, zero-data-retention and data-policy rules from what
 * each record holds, and its budget exactly, by running spend per entity and window recomputed
 * with the proposed limit and interval (a request refused early leaves room for a later one).
 * The other guardrails that governed a request are unchanged: what they refused stays refused,
 * and what they let through they let through again. Content filters are not decided here (the
 * request's text is not recorded): a content refusal stays as recorded.
 */
export class GuardrailReplay {
  private readonly policy: EffectivePolicy;
  private readonly limitMicros: number | undefined;
  /** Running spend in micro-dollars per "entity|window". */
  private readonly spent = new Map<string, number>();
  /**
   * Decisions and lookups by what they depend on: a window holds up to millions of requests
   * of a few models, endpoints, keys and days, so each is worked out once.
   */
  private readonly decided = new Map<string, ReplayRule | undefined>();
  private readonly cheapest = new Map<string, number>();
  private readonly windows = new Map<number, string>();
  private readonly entities = new Map<string, string[]>();

  constructor(
    private readonly proposed: Guardrail,
    private readonly catalog: ModelCatalog,
    account: AccountSettings,
    /**
     * The rules the replayed layer can give, when fewer than a guardrail's: a policy holds one
     * type's, and a guardrail whose part it replaced keeps its id for the others' refusals.
     */
    private readonly ownRules?: ReadonlySet<ReplayRule>,
  ) {
    // The source only decides whose budget counts; each request's own is applied in budgetOf.
    this.policy = effectivePolicy([{ source: "key", guardrail: proposed }], account);
    const budget = this.policy.budgets[0];
    this.limitMicros = budget ? toMicros(budget.limitUsd) : undefined;
  }

  /** The proposed budget's limit in micro-dollars; undefined when the version has none. */
  get budgetLimitMicros(): number | undefined {
    return this.limitMicros;
  }

  /**
   * Every rule but the budget: the request's final outcome when it is decided without the
   * budget (refused, or no budget proposed), else the cost it would charge if admitted. `r` may
   * stand for a group of requests alike in everything a rule reads (costs and characters summed).
   */
  decideBeforeBudget(
    r: RecordedRequest,
  ): { final: ReplayedRequest } | { before: ReplayedRequest["before"]; candidateUsd: number } {
    const before = this.recorded(r);
    const recordedUsd = r.outcome === "served" ? r.costUsd : 0;
    // Refused by another guardrail or by no guardrail's rule (credits, rate, key limit), or by
    // content (not replayed): as recorded.
    if (!before.allowed && (before.rule === "other" || before.rule === "content"))
      return { final: { before, after: before, recordedUsd, replayedUsd: 0 } };
    const rule = this.ruleRefusing(r);
    if (rule)
      return { final: { before, after: { allowed: false, rule }, recordedUsd, replayedUsd: 0 } };
    const candidateUsd = r.outcome === "served" && r.provider ? r.costUsd : this.estimatedUsd(r);
    if (this.limitMicros === undefined)
      return {
        final: { before, after: { allowed: true }, recordedUsd, replayedUsd: candidateUsd },
      };
    return { before, candidateUsd };
  }

  /** Replays the next request (requests must come oldest first). */
  next(r: RecordedRequest): ReplayedRequest {
    const pre = this.decideBeforeBudget(r);
    if ("final" in pre) return pre.final;
    const recordedUsd = r.outcome === "served" ? r.costUsd : 0;
    if (!this.admitBudget(r, pre.candidateUsd))
      return {
        before: pre.before,
        after: { allowed: false, rule: "budget" },
        recordedUsd,
        replayedUsd: 0,
      };
    return {
      before: pre.before,
      after: { allowed: true },
      recordedUsd,
      replayedUsd: pre.candidateUsd,
    };
  }

  /** The proposed budget's window (its id) that a UTC day number falls in. */
  windowOfDay(day: number): string {
    let window = this.windows.get(day);
    if (window === undefined) {
      const budget = this.policy.budgets[0];
      window = budget ? budgetWindow(budget.interval, new Date(day * DAY_MS)).id : "";
      this.windows.set(day, window);
    }
    return window;
  }

  /** Whose spend the proposed budget counts for a request: `key:<hash>`, `member:<id>`. */
  entitiesOf(source: GuardrailSource, keyHash: string, memberUserId: string): string[] {
    const who = `${source}|${keyHash}|${memberUserId}`;
    let entities = this.entities.get(who);
    if (!entities) {
      const budget = this.policy.budgets[0];
      entities = budget
        ? budgetCounters([{ ...budget, source }], keyHash, memberUserId).map((c) => c.entity)
        : [];
      this.entities.set(who, entities);
    }
    return entities;
  }

  /** The spend counters ("entity|window") the proposed budget checks and charges a request against. */
  countersOf(r: RecordedRequest): string[] {
    const window = this.windowOfDay(Math.floor(r.atMs / DAY_MS));
    return this.entitiesOf(r.source, r.keyHash, r.memberUserId).map((e) => `${e}|${window}`);
  }

  /** Adds spend the caller knows was admitted (micro-dollars) to a counter, before `next`. */
  charge(counter: string, micros: number): void {
    this.spent.set(counter, (this.spent.get(counter) ?? 0) + micros);
  }

  /**
   * The price per million characters a request past every other rule is charged at when it is
   * admitted, or null when it is charged its recorded cost (an endpoint served it).
   */
  pricePerMillion(r: RecordedRequest): number | null {
    return r.outcome === "served" && r.provider ? null : this.cheapestPrice(r.model);
  }

  /** What the proposed budget charges for a cost (nothing for BYOK unless it counts BYOK). */
  chargedMicros(byok: boolean, costUsd: number): number {
    const budget = this.policy.budgets[0];
    return byok && !budget?.includeByok ? 0 : toMicros(costUsd);
  }

  private recorded(r: RecordedRequest): ReplayedRequest["before"] {
    if (r.outcome === "served") return { allowed: true };
    const rule = RULE_OF_REASON[r.refusalReason];
    return rule && r.decidedBy === this.proposed.id && (this.ownRules?.has(rule) ?? true)
      ? { allowed: false, rule }
      : { allowed: false, rule: "other" };
  }

  private modelOf(id: string): CatalogModel {
    // A model the catalog no longer has: its id alone, with no endpoint to route to.
    return this.catalog.find(id) ?? { ...create(ModelSchema, { id }), endpoints: [] };
  }

  /** The first of the proposed version's rules (but budget) that refuses the request. */
  private ruleRefusing(r: RecordedRequest): ReplayRule | undefined {
    const d = r.endpointPolicy;
    const id = `${r.region}|${r.model}|${r.provider}|${r.costUsd > 0}|${d ? `${+d.zeroDataRetention}${+d.safetyRetention}${+d.trainsOnData}${+d.publishesPrompts}` : "-"}`;
    if (this.decided.has(id)) return this.decided.get(id);
    const rule = this.decide(r);
    this.decided.set(id, rule);
    return rule;
  }

  private decide(r: RecordedRequest): ReplayRule | undefined {
    const p = this.policy;
    if (p.regions && r.region !== undefined && !p.regions.has(r.region)) return "region";
    const model = this.modelOf(r.model);
    if (modelRefusal(p, model)) return "model";
    const rules = policyRules(p, model);
    const refusedBy = (e: CatalogEndpoint): ReplayRule | undefined => {
      const i = rules.findIndex((rule) => rule(e) !== undefined);
      return i < 0 ? undefined : POLICY_RULE_KINDS[i];
    };
    if (r.provider && r.endpointPolicy) {
      // The endpoint that served, with its data policy as recorded: only whether it was free
      // matters to the rules (training permissions differ for free endpoints).
      const price = r.costUsd > 0 ? 1 : 0;
      return refusedBy({
        provider: r.provider,
        pricePerMillionChars: price,
        dataPolicy: r.endpointPolicy,
      } as CatalogEndpoint);
    }
    // No endpoint recorded (refused before routing): routing would pick any the rules leave.
    if (model.endpoints.length === 0) return undefined;
    const reasons = model.endpoints.map(refusedBy);
    return reasons.some((x) => x === undefined) ? undefined : reasons[0];
  }

  /** What a request no endpoint served would cost: the cheapest endpoint the rules leave. */
  private estimatedUsd(r: RecordedRequest): number {
    return (r.characters * this.cheapestPrice(r.model)) / 1_000_000;
  }

  private cheapestPrice(modelId: string): number {
    let price = this.cheapest.get(modelId);
    if (price === undefined) {
      const model = this.modelOf(modelId);
      const rules = policyRules(this.policy, model);
      const prices = model.endpoints
        .filter((e) => rules.every((rule) => rule(e) === undefined))
        .map((e) => e.pricePerMillionChars);
      price = prices.length === 0 ? 0 : Math.min(...prices);
      this.cheapest.set(modelId, price);
    }
    return price;
  }

  /** Checks and charges the proposed budget as admission does (store/redis-scripts.ts). */
  private admitBudget(r: RecordedRequest, costUsd: number): boolean {
    const limit = this.limitMicros;
    if (limit === undefined) return true;
    const amount = this.chargedMicros(r.byok, costUsd);
    // A request that costs the budget nothing (BYOK it leaves out, a free model) is not checked
    // against it, however spent: admission checks only an amount above zero.
    if (amount === 0) return true;
    const counters = this.countersOf(r);
    for (const c of counters) {
      const spent = this.spent.get(c) ?? 0;
      if (spent >= limit || spent + amount > limit) return false;
    }
    for (const c of counters) this.spent.set(c, (this.spent.get(c) ?? 0) + amount);
    return true;
  }
}
