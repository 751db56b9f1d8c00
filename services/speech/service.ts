import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { audioContentType, audioFormatValue } from "../../domain/audio-formats.js";
import { callerOf } from "../../domain/auth/caller-auth.js";
import type { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import type { CatalogEndpoint } from "../../domain/catalog/types.js";
import {
  GENERATION_STATUSES,
  isRegionName,
  quotedRegionNames,
  type RegionName,
  regionValue,
} from "../../domain/enums.js";
import { canonicalId, isKeyHash, newGenerationId } from "../../domain/ids.js";
import { admissionRefusals, speechDuration, speechTimeToFirstByte } from "../../domain/metrics.js";
import { rateLimitHeaderValues } from "../../domain/rate-limit-headers.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { FilterAction } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type Generation,
  GenerationSchema,
  GenerationStatus,
  type RoutingStep,
  type ShadowOutcome,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import type {
  GetActivityRequest,
  GetUsageRequest,
  ListGenerationsRequest,
  SpeechService,
  SynthesizeRequest,
  SynthesizeResponse,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { admitRequest, type MeteringConfig, settlement } from "../../governance/admission.js";
import type { SettlementAlerts } from "../../governance/alerts/detector.js";
import {
  decidingOutcome,
  FilterBlocked,
  type FilteredText,
  filteredParts,
  filterText,
} from "../../governance/content-filtering.js";
import type { ExampleOutcome } from "../../governance/decide-example.js";
import { budgetRefusalOf, markDecidedBy } from "../../governance/decided-by.js";
import { explain } from "../../governance/explain.js";
import type { TextPart } from "../../governance/filters/index.js";
import type { GovernanceCache, Principal } from "../../governance/governance-cache.js";
import { governedBy } from "../../governance/policy/governed-by.js";
import {
  modelRefusal,
  modelRefuser,
  policyRules,
  usableModels,
} from "../../governance/policy-rules.js";
import {
  differingShadow,
  type LiveFiltering,
  shadowDecisions,
} from "../../governance/shadow-decision.js";
import { CONFIG_DEFAULTS, type SpeechRoutingConfig } from "../../platform/config/config.js";
import { InFlight } from "../../platform/in-flight.js";
import {
  annotateActiveSpan,
  inSpan,
  traceBodyAttributes,
} from "../../platform/observability/tracing.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument, notFound, permissionDenied } from "../../platform/rpc/errors.js";
import { REQUEST_ID_HEADER } from "../../platform/rpc/request-id.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { Admission, Settlement } from "../../store/admission.js";
import { recordedMs } from "../../store/request-log/generations.js";
import { RetryQueue } from "../../store/retry-queue.js";
import type { Store } from "../../store/types.js";
import { MAX_CHUNK_BYTES, SAMPLE_RATE, sourceFormat } from "./audio/index.js";
import { type AudioTally, audioBytes } from "./audio-stream.js";
import type { AudioCache } from "./cache/audio-cache.js";
import { audioCacheUsage } from "./cache/usage-rpc.js";
import { coalesce } from "./coalesce.js";
import type { AdapterRegistry } from "./engines/registry.js";
import type { GenerationLog } from "./generations.js";
import { audioMessage, startMessage } from "./messages.js";
import {
  encodeDraft,
  encodeEnding,
  endingOf,
  type RecordDraft,
  recordOf,
  wholeRecord,
} from "./recovery/record-parts.js";
import type { HeldReservation, ReservationKeeper } from "./recovery/reservation-keeper.js";
import { invalidRequestRecord, refusalRecord } from "./refusal-record.js";
import { replayDataFor } from "./replay-data.js";
import { planSpeech, type SpeechPlan } from "./request.js";
import { RequestLogQueries } from "./request-log-queries.js";
import { returnOnAbort } from "./return-on-abort.js";
import { Failover } from "./routing/failover.js";
import { routingOf, skippedStep, withRouting } from "./routing/steps.js";
import { routeEndpoints } from "./routing.js";

export interface SpeechServiceDeps {
  store: Store;
  catalog: ModelCatalog;
  adapters: AdapterRegistry;
  governance: GovernanceCache;
  metering: MeteringConfig;
  /** Admission's "now" (rate window, budget days); the system clock unless a test pins one. */
  clock?: Clock;
  /** Keeps settlements for retry while the store is down. */
  retries?: RetryQueue;
  /** The request log: every record, served or refused, goes there off the hot path. */
  generations: GenerationLog;
  /** Budget alerts: told about each settlement, off the hot path (it never waits or throws). */
  alerts?: SettlementAlerts;
  /** Circuit breakers and retries (RAILGATE_SPEECH_BREAKER_*, RAILGATE_SPEECH_RETRY*); the defaults unless given. */
  routing?: SpeechRoutingConfig;
  /** The audio cache of opted-in workspaces (services/speech/cache); none = never cached. */
  audioCache?: AudioCache;
  /** Leases and checkpoints of the reservations in flight; none = untracked (tests). */
  keeper?: ReservationKeeper;
  /** RAILGATE_REPLAY_DATA_KEY: seals the inputs of workspaces whose replay_data is encrypted_input. */
  replayDataKey?: Buffer;
}

/** How a stream ended: who served it, what it is billed for, and its record to write. */
interface StreamOutcome {
  served: CatalogEndpoint | undefined;
  billed: number;
  record: Generation | undefined;
}

/** Characters of the input that the audio actually delivered covers, as the adapter reports it. */
interface Spoken {
  characters: number;
  reported: boolean;
}

/**
 * What a request is billed for: the whole input once its stream completed, or
 * when the adapter cannot say how far it got (upstreams bill the whole input
 * once they accept it); otherwise, for a stream cut short (client gone,
 * shutdown, failure), only the characters whose audio was delivered.
 */
/**
 * ExplainRequest.region as the one typed region it names; undefined when none was asked. The
 * wire keeps the API's name (a string, as the JSON query and gRPC clients send it): only this
 * conversion reads it.
 */
function explainedRegion(name: string): RegionName | undefined {
  if (!name) return undefined;
  if (!isRegionName(name)) throw invalidArgument(`region must be one of ${quotedRegionNames()}`);
  return name;
}

function billedCharacters(characters: number, status: GenerationStatus, spoken: Spoken): number {
  if (status === GenerationStatus.COMPLETED || !spoken.reported) return characters;
  return Math.min(characters, spoken.characters);
}

/**
 * The generation record of a stream that started: its draft and the endpoint that serves it;
 * status, bytes, duration and cost are filled in when it ends.
 */
function startRecord(
  draft: RecordDraft,
  plan: SpeechPlan,
  endpoint: CatalogEndpoint,
  outcomes: FilteredText["outcomes"],
  routing: RoutingStep[],
): Generation {
  const { createdAtMs, filterOutcomes: _plainCopies, ...known } = draft;
  return create(GenerationSchema, {
    ...known,
    // The outcomes themselves rather than the draft's plain copies of them.
    filterOutcomes: outcomes,
    provider: endpoint.provider,
    byok: endpoint.byok,
    costUsd: (plan.characters * endpoint.pricePerMillionChars) / 1_000_000,
    routing,
    servedDataPolicy: endpoint.dataPolicy,
    // The draft's time too: the request log stores a record once by (id, created_at).
    createdAt: timestampFromMs(createdAtMs),
  });
}

/**
 * The record of an admitted request before any endpoint answers: what a recovering process
 * writes if this one dies before its first checkpoint (nothing known served, so nothing charged).
 */
function draftOf(
  principal: Principal,
  region: RegionName,
  plan: SpeechPlan,
  outcomes: FilteredText["outcomes"],
  nowMs: number,
  shadowOutcome: ShadowOutcome | undefined,
): RecordDraft {
  return {
    id: newGenerationId(),
    createdAtMs: nowMs,
    model: plan.model.id,
    characters: plan.characters,
    format: audioFormatValue(plan.format) ?? 0,
    sessionId: plan.sessionId,
    user: plan.user,
    trace: plan.trace,
    filterOutcomes: outcomes.map((o) => ({
      slug: o.slug,
      label: o.label,
      action: o.action,
      count: o.count,
      guardrailId: o.guardrailId,
      ...(o.policyId ? { policyId: o.policyId } : {}),
    })),
    guardrailId: decidingOutcome(outcomes)?.guardrailId ?? "",
    policyId: decidingOutcome(outcomes)?.policyId ?? "",
    keyHash: principal.key.hash,
    workspaceId: principal.key.workspaceId,
    voice: plan.voice,
    speed: plan.speed,
    // Every endpoint is reached from the deployment the request entered: the
    // region it was served in is its ingress region (what allowed_data_regions governs).
    dataRegion: regionValue(region),
    governedBy: governedBy(principal.policy),
    ...(shadowOutcome
      ? {
          shadowOutcome: {
            guardrailId: shadowOutcome.guardrailId,
            live: shadowOutcome.live,
            shadow: shadowOutcome.shadow,
            reason: shadowOutcome.reason,
            ...(shadowOutcome.policyId ? { policyId: shadowOutcome.policyId } : {}),
          },
        }
      : {}),
  };
}

/** The live outcome of an admitted request, in the words a shadow's outcome is compared in. */
/** The running shadows' decisions of a request, as enforcement read it before routing. */
function decideShadows(
  shadows: NonNullable<Principal["shadows"]>,
  validated: SpeechPlan,
  region: RegionName,
  signal: AbortSignal,
  live: LiveFiltering | undefined,
) {
  const request = {
    model: validated.model,
    segments: validated.segments,
    references: validated.references.parts,
    zdr: validated.zdr,
    region,
  };
  return shadowDecisions(shadows, request, Date.now(), signal, live);
}

function liveOutcome(outcomes: FilteredText["outcomes"]): ExampleOutcome {
  if (outcomes.some((o) => o.action === FilterAction.REDACT)) return "redacted";
  if (outcomes.some((o) => o.action === FilterAction.FLAG)) return "flagged";
  return "allowed";
}

/** What settling a stream cut off now would leave: its charge and how its record ends. */
function interruptedProgress(
  admission: Admission,
  principal: Principal,
  plan: SpeechPlan,
  endpoint: CatalogEndpoint,
  spoken: Spoken,
  generation: Generation,
  tally: AudioTally,
): { actual: Settlement; record: Uint8Array } {
  const billed = billedCharacters(plan.characters, GenerationStatus.INTERRUPTED, spoken);
  const ending = endingOf(generation, GenerationStatus.INTERRUPTED);
  ending.bytes = tally.bytes;
  ending.durationSeconds = tally.seconds;
  ending.costUsd = (billed * endpoint.pricePerMillionChars) / 1_000_000;
  return {
    actual: settlement(admission, principal, billed, endpoint),
    record: encodeEnding(ending),
  };
}

/**
 * The record a settlement puts in the outbox: how it ended, joined there to its draft, when it is
 * the draft's record; a whole one otherwise (a refusal record of its own); none when untracked.
 */
function outboxRecord(
  held: HeldReservation | undefined,
  draft: RecordDraft,
  record: Generation,
): Uint8Array | undefined {
  if (!held) return undefined;
  return record.id === draft.id ? encodeEnding(endingOf(record)) : wholeRecord(record);
}

/** A chunk went out: the next heartbeat checkpoints what the request has served. */
function markServed(held: HeldReservation | undefined): void {
  if (held) held.dirty = true;
}

export class SpeechServiceImpl implements ServiceImpl<typeof SpeechService> {
  private readonly generations: GenerationLog;
  private readonly queries: RequestLogQueries;
  private readonly retries: RetryQueue;
  private readonly failover: Failover;
  private readonly firstByteDeadlineMs: number;
  /** Synthesize calls in progress, until their settlement and record are written (or kept). */
  readonly inFlight = new InFlight();

  constructor(private readonly deps: SpeechServiceDeps) {
    this.generations = deps.generations;
    this.queries = new RequestLogQueries(deps.generations, deps.store);
    this.retries = deps.retries ?? new RetryQueue({ max: CONFIG_DEFAULTS.retryQueueMax });
    const routing = deps.routing ?? CONFIG_DEFAULTS.speechRouting;
    this.failover = new Failover(routing);
    this.firstByteDeadlineMs = routing.firstByteDeadlineMs;
  }

  /**
   * Tries endpoints in routing's order until one produces its first byte (services/speech/routing/
   * failover.ts: circuit breakers, retries of 429/5xx before the first byte): fail-over is
   * invisible to the client.
   */
  private async open(
    plan: SpeechPlan,
    endpoints: CatalogEndpoint[],
    signal: AbortSignal,
    tally: AudioTally,
    requestId: string | null,
    deadline: number,
  ) {
    const opened = await this.failover.open<{ spoken: Spoken; merged: boolean }>({
      modelId: plan.model.id,
      endpoints,
      signal,
      deadline,
      requestId: requestId ?? undefined,
      attempt: async (endpoint, attemptSignal) => {
        const spoken: Spoken = { characters: 0, reported: false };
        const output = await this.deps.adapters.for(endpoint).start({
          model: plan.model,
          endpoint,
          segments: plan.segments,
          speed: plan.speed,
          format: sourceFormat(plan.format),
          references: plan.references.parts,
          options: plan.providerOptions[endpoint.provider],
          signal: attemptSignal,
          onSpoken: (n) => {
            spoken.reported = true;
            spoken.characters += n;
          },
        });
        // An upstream's body hands over everything that arrived while the reader was busy:
        // no read-ahead needed (see coalesce for the engine's pieces).
        const merged = output.kind === "encoded" && output.merged === true;
        return { stream: audioBytes(output, plan.format, tally), extra: { spoken, merged } };
      },
    });
    return { ...opened, spoken: opened.extra.spoken, merged: opened.extra.merged };
  }

  synthesize(req: SynthesizeRequest, ctx: HandlerContext): AsyncGenerator<SynthesizeResponse> {
    // Connect may leave a cancelled stream suspended without returning it: see returnOnAbort.
    return returnOnAbort(this.serve(req, ctx), ctx.signal);
  }

  /**
   * One Synthesize call, as ONE generator: every audio chunk passes through each generator
   * layer between the source and the caller (a `yield*` costs a few promise turns per chunk),
   * so the steps that run once per request are plain async methods called from here:
   * `admit` (policy, filters, routing, admission), `open` (the first endpoint that produces
   * audio), `startRecord` (the generation record); then the chunks are relayed in the loop
   * below and the `finally` blocks record, settle and leave, in that order.
   */
  private async *serve(
    req: SynthesizeRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<SynthesizeResponse> {
    const leave = this.inFlight.enter();
    try {
      const started = performance.now();
      const signal = ctx.signal;
      // The interceptor resolved the key from the call's metadata and already
      // applied region rule 1: nothing in the message can name another caller.
      const { principal, region } = callerOf<Principal>(ctx);
      const { plan, outcomes, endpoints, excluded, admitted, draft, input } = await this.admit(
        req,
        ctx,
        principal,
        region,
      );
      const { admission, metered, rate } = admitted;
      // Response metadata leaves with the first message, so the gateway has it before any audio.
      if (rate)
        for (const [name, value] of rateLimitHeaderValues(rate))
          ctx.responseHeader.set(name, value);
      const tally: AudioTally = { bytes: 0, seconds: 0 };
      const outcome: StreamOutcome = { served: undefined, billed: 0, record: undefined };
      // The audio cache (services/speech/cache/audio-cache.ts), after admission so that limits
      // hold for hits too: a stored clip or an identical synthesis in progress serves here; a
      // miss of an opted-in workspace leads its own synthesis, which `leader` sees pass by.
      const cached = await this.deps.audioCache?.lookup({
        principal,
        region,
        plan,
        endpoints,
        outcomes,
        started,
        signal,
      });
      const leader = cached?.lead;
      const held = this.deps.keeper?.hold(admission);
      try {
        if (cached?.serve) {
          yield* cached.serve(outcome);
          return;
        }
        const opened = await this.open(
          plan,
          endpoints,
          signal,
          tally,
          // The gateway's request id, so this service's log lines join its access log.
          ctx.requestHeader.get(REQUEST_ID_HEADER),
          this.firstByteDeadline(started, ctx),
        ).catch((err: unknown) => {
          // Every eligible endpoint failed before any audio: logged as failed, with the reason
          // and the routing (the endpoints tried, then those routing left out).
          withRouting(err, [...routingOf(err), ...excluded.map(skippedStep)]);
          outcome.record = refusalRecord(
            err,
            principal,
            region,
            plan,
            outcomes,
            GenerationStatus.FAILED,
          );
          throw err;
        });
        const { endpoint, stream } = opened;
        outcome.served = endpoint;
        const routing = [...opened.steps, ...excluded.map(skippedStep)];
        const generation = startRecord(draft, plan, endpoint, outcomes, routing);
        if (held) {
          held.progress = () =>
            interruptedProgress(
              admission,
              principal,
              plan,
              endpoint,
              opened.spoken,
              generation,
              tally,
            );
        }
        let status = GenerationStatus.FAILED;
        let threw = false;
        try {
          const start = startMessage({
            format: generation.format,
            contentType: audioContentType(plan.format),
            sampleRate: SAMPLE_RATE,
            channels: 1,
            generationId: generation.id,
            model: plan.model.id,
            provider: endpoint.provider,
          });
          leader?.see(start);
          yield start;
          if (!opened.first.done) {
            generation.timeToFirstByteMs = recordedMs(performance.now() - started);
            speechTimeToFirstByte
              .labels(endpoint.provider)
              .observe(generation.timeToFirstByteMs / 1000);
            const first = audioMessage(opened.first.value);
            leader?.see(first);
            markServed(held);
            yield first;
          }
          // After the first piece, pieces that pile up while the caller is busy go out merged:
          // by the source itself when its reads hand over all that arrived (an upstream's body),
          // else by coalesce's read-ahead (the engine's pieces).
          const rest = opened.merged ? stream : coalesce(stream, MAX_CHUNK_BYTES);
          for await (const piece of rest) {
            const message = audioMessage(piece);
            leader?.see(message);
            markServed(held);
            yield message;
          }
          status = GenerationStatus.COMPLETED;
        } catch (err) {
          threw = true;
          throw err;
        } finally {
          opened.detach();
          // Cut short without an error of its own: the caller went away (its signal aborted), or
          // stopped reading (the generator was returned at a yield).
          if (status !== GenerationStatus.COMPLETED && (signal.aborted || !threw))
            status = GenerationStatus.CANCELLED;
          await stream.return(undefined);
          generation.status = status;
          speechDuration
            .labels(endpoint.provider, GENERATION_STATUSES.name(status) ?? "")
            .observe((performance.now() - started) / 1000);
          generation.bytes = BigInt(tally.bytes);
          generation.durationSeconds = tally.seconds;
          outcome.billed = billedCharacters(plan.characters, status, opened.spoken);
          // The record tells what was charged: less than the whole input for a stream cut short.
          generation.costUsd = (outcome.billed * endpoint.pricePerMillionChars) / 1_000_000;
          outcome.record = generation;
        }
      } finally {
        // A leader's clip is stored only when its stream completed; otherwise its joiners fail.
        leader?.finish(outcome);
        cached?.end();
        // The reservation becomes what was delivered (see billedCharacters); a request that never
        // produced audio releases it whole: the only round trip after the stream. Its record goes
        // into the store's outbox in the same step, so no settled request lacks one; then to
        // the request log's writer (before the stream ends, so a GET /generation right after
        // finds it). Kept for retry while the store is down: once per admission.
        const actual = settlement(admission, principal, outcome.billed, outcome.served);
        // A request that ended before it had a record of its own (an error on the way) has its draft's.
        const record = outcome.record ?? recordOf(draft, { status: GenerationStatus.FAILED });
        const recordBytes = outboxRecord(held, draft, record);
        await this.retries.submit(
          "settlement",
          { admission: admission.id, scope: admission.scope, keyHash: admission.keyHash, actual },
          async () => {
            const applied = await inSpan("railgate.settlement", { "db.system.name": "redis" }, () =>
              this.deps.store.settle(admission, actual, metered, recordBytes),
            );
            // Not applied: a live process settled it (this one stalled past its lease) with the
            // record of its last checkpoint, which is the one that matches the counters.
            if (applied) {
              if (input) this.keepReplayData(record, principal, input, plan.zdr);
              this.generations.add(
                record,
                recordBytes && { scope: admission.scope, id: admission.id ?? "" },
              );
            }
          },
        );
        this.deps.keeper?.release(admission);
        // After the counters moved: the detector reads them later, on its own time.
        this.deps.alerts?.settled({ principal, admission, actual, metered });
      }
    } finally {
      leave();
    }
  }

  /**
   * Everything before the first byte that can refuse the request: the guardrails' model rules,
   * the content filters, routing and admission. Every refusal from here on is a request the log
   * records, with why and which guardrail decided.
   */
  private async admit(
    req: SynthesizeRequest,
    ctx: HandlerContext,
    principal: Principal,
    region: RegionName,
  ) {
    let validated: SpeechPlan;
    try {
      validated = planSpeech(req, this.deps.catalog);
    } catch (err) {
      // An unknown model or a field the model cannot take: refused, and in the log like the rest.
      const record = invalidRequestRecord(err, principal, region, req);
      if (record) this.generations.add(record);
      throw err;
    }
    let outcomes: FilteredText["outcomes"] = [];
    let plan: SpeechPlan = validated;
    // The text as the client sent it, for a workspace that keeps replay data (one property
    // check for every other).
    const input = principal.replayData
      ? filteredParts(validated.segments, validated.references.parts)
      : undefined;
    // Past the rules a shadow decides: a refusal from here on (budget, credits, rate, key limit)
    // would refuse under the shadow too, so it records no shadow outcome.
    let counting = false;
    try {
      const refusal = modelRefusal(principal.policy, validated.model);
      if (refusal) {
        admissionRefusals.labels("model").inc();
        throw markDecidedBy(
          permissionDenied(refusal.reason, refusal.message),
          modelRefuser(principal.policy, validated.model),
        );
      }
      const filtered = await filterText(
        principal.filters,
        principal.policy.filters,
        validated.segments,
        validated.references.parts,
        ctx.signal,
      );
      outcomes = filtered.outcomes;
      plan = {
        ...validated,
        segments: filtered.segments,
        references: { ...validated.references, parts: filtered.references },
        characters: filtered.segments.reduce((n, s) => n + [...s.text].length, 0),
      };
      const { endpoints, excluded } = routeEndpoints(
        plan,
        policyRules(principal.policy, plan.model, plan.zdr),
        this.failover.measure(plan.model.id),
      );
      annotateActiveSpan({
        "gen_ai.operation.name": "text_to_speech",
        "gen_ai.request.model": plan.model.id,
        ...traceBodyAttributes(plan.trace),
      });
      const at = new Date((this.deps.clock ?? systemClock).now());
      const characters = plan.characters;
      const live = liveOutcome(outcomes);
      // With no shadow running this is one property check; with one, it is decided now that
      // the live filters have run (a shadow with the same filters takes their result).
      const shadowOutcome =
        principal.shadows &&
        differingShadow(
          await decideShadows(principal.shadows, validated, region, ctx.signal, {
            filters: principal.filters,
            decision: { outcome: live, reason: "" },
          }),
          live,
        );
      const draft = draftOf(principal, region, plan, outcomes, Date.now(), shadowOutcome);
      const keeper = this.deps.keeper;
      const recovery = keeper && { leaseUntilMs: keeper.leaseUntil(), record: encodeDraft(draft) };
      counting = true;
      const admitted = await inSpan(
        "railgate.admission",
        { "db.system.name": "redis", "railgate.characters": characters },
        () =>
          admitRequest(
            this.deps.store,
            principal,
            characters,
            endpoints,
            this.deps.metering,
            at,
            recovery,
          ),
      );
      return { plan, outcomes, endpoints, excluded, admitted, draft, input };
    } catch (err) {
      const error = err instanceof FilterBlocked ? err.error : err;
      if (err instanceof FilterBlocked) outcomes = err.outcomes;
      const record = refusalRecord(
        error,
        principal,
        region,
        plan,
        outcomes,
        GenerationStatus.REFUSED,
      );
      // A block is the live filters' result; a refusal before them leaves the shadow to filter.
      if (record && principal.shadows && !counting) {
        const live: LiveFiltering | undefined =
          err instanceof FilterBlocked
            ? { filters: principal.filters, decision: { outcome: "refused", reason: "" } }
            : undefined;
        record.shadowOutcome = differingShadow(
          await decideShadows(principal.shadows, validated, region, ctx.signal, live),
          "refused",
        );
      }
      if (record && input) this.keepReplayData(record, principal, input, validated.zdr);
      if (record) this.generations.add(record);
      // A budget's refusal says it is used up: its 100% alert and budget.exhausted are due.
      const refusal = budgetRefusalOf(error);
      if (refusal) {
        const at = new Date((this.deps.clock ?? systemClock).now());
        this.deps.alerts?.budgetRefused({ principal, refusal, at });
      }
      throw error;
    }
  }

  /**
   * What the record keeps for what-if replays (services/speech/replay-data.ts), worked out after
   * the answer: on the next turn of the event loop, so neither a refusal nor the end of a
   * stream waits for the detectors; the request log's batch waits for it instead.
   */
  private keepReplayData(
    record: Generation,
    principal: Principal,
    input: TextPart[],
    zdrRequested: boolean,
  ): void {
    const at = { id: record.id, createdAtMs: record.createdAt ? timestampMs(record.createdAt) : 0 };
    const key = this.deps.replayDataKey;
    this.generations.withReplayData(
      record,
      new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
        replayDataFor(principal, input, at, zdrRequested, key),
      ),
    );
  }

  /**
   * When retries stop: the gateway's first-message deadline from the request's arrival (past it
   * the client has its 524), or the call's own deadline when a direct gRPC caller set a shorter one.
   */
  private firstByteDeadline(started: number, ctx: HandlerContext): number {
    const own = ctx.timeoutMs();
    const byConfig = started + this.firstByteDeadlineMs;
    return own === undefined ? byConfig : Math.min(byConfig, performance.now() + own);
  }

  /** Shutdown: keeps retrying kept writes for at most `withinMs`, then logs what is lost. */
  drainRetries(withinMs: number): Promise<void> {
    return this.retries.drain(withinMs);
  }

  /** The catalog's own messages: nothing is built per call. */
  async listModels() {
    return { models: this.deps.catalog.models() };
  }

  /** The catalog as the calling key's guardrails leave it (GET /models/user). */
  async listUserModels(_req: unknown, ctx: HandlerContext) {
    const { principal } = callerOf<Principal>(ctx);
    return { models: usableModels(principal.policy, this.deps.catalog.models()) };
  }

  getGeneration(req: { id: string }, ctx: HandlerContext) {
    return this.queries.get(req.id, ctx);
  }

  listGenerations(req: ListGenerationsRequest, ctx: HandlerContext) {
    return this.queries.list(req, ctx);
  }

  getActivity(req: GetActivityRequest, ctx: HandlerContext) {
    return this.queries.activity(req, ctx, (this.deps.clock ?? systemClock).now());
  }

  getUsage(req: GetUsageRequest, ctx: HandlerContext) {
    return this.queries.usage(req, ctx, (this.deps.clock ?? systemClock).now());
  }

  /** The audio cache's view of one workspace (services/speech/cache/usage-rpc.ts). */
  getAudioCache(req: { workspaceId: string }) {
    return audioCacheUsage(this.deps.store, this.deps.audioCache, req.workspaceId);
  }

  async explain(req: { keyHash: string; model: string; region: string; generationId: string }) {
    if (!isKeyHash(req.keyHash))
      throw invalidArgument("key_hash must be 64 lowercase hex characters");
    const principal = await this.deps.governance.get(req.keyHash);
    if (!principal)
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.keyHash)} not found`);
    // A generation of this key: which endpoints its request tried, and why (its routing).
    const generation = req.generationId
      ? await this.generations.get(canonicalId(req.generationId), {
          keyHash: req.keyHash,
        })
      : undefined;
    if (req.generationId && !generation) {
      throw notFound(
        ErrorReason.GENERATION_NOT_FOUND,
        `generation ${quote(req.generationId)} of key ${req.keyHash} not found`,
      );
    }
    const answer = await explain(
      this.deps.store,
      this.deps.catalog,
      principal,
      req.model,
      explainedRegion(req.region),
      new Date((this.deps.clock ?? systemClock).now()),
      (model, provider) => this.failover.health(model, provider),
    );
    if (generation) {
      answer.generationId = generation.id;
      answer.routing = generation.routing;
    }
    return answer;
  }
}
