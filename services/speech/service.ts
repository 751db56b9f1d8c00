import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  AudioFormat,
  type Generation,
  GenerationSchema,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  type SpeechService,
  type SynthesizeRequest,
  type SynthesizeResponse,
  SynthesizeResponseSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { admitRequest, type MeteringConfig, settlement } from "../../governance/admission.js";
import { type FilteredText, filterText } from "../../governance/content-filtering.js";
import { explain } from "../../governance/explain.js";
import type { GovernanceCache, Principal } from "../../governance/governance-cache.js";
import { modelRefusal, policyRules } from "../../governance/policy-rules.js";
import { callerOf } from "../../platform/auth/caller-auth.js";
import { invalidArgument, notFound, permissionDenied, withReason } from "../../platform/errors.js";
import { isKeyHash, newId } from "../../platform/ids.js";
import { InFlight } from "../../platform/in-flight.js";
import { componentLogger } from "../../platform/logger.js";
import {
  admissionRefusals,
  speechDuration,
  speechTimeToFirstByte,
  upstreamErrors,
} from "../../platform/metrics.js";
import { quote } from "../../platform/quote.js";
import { rateLimitHeaderValues } from "../../platform/rate-limit-headers.js";
import type { RegionName } from "../../platform/regions.js";
import { REQUEST_ID_HEADER } from "../../platform/request-id.js";
import { RetryQueue } from "../../platform/retry-queue.js";
import { type Clock, nowTimestamp, systemClock } from "../../platform/time.js";
import { annotateActiveSpan, inSpan, traceBodyAttributes } from "../../platform/tracing.js";
import type { Store } from "../../store/types.js";
import { MAX_CHUNK_BYTES, SAMPLE_RATE, sourceFormat } from "./audio/index.js";
import { type AudioTally, audioBytes } from "./audio-stream.js";
import { catalogToProto } from "./catalog/catalog-proto.js";
import type { ModelCatalog } from "./catalog/model-catalog.js";
import type { CatalogEndpoint } from "./catalog/types.js";
import { coalesce } from "./coalesce.js";
import type { AdapterRegistry } from "./engines/registry.js";
import { GenerationLog } from "./generations.js";
import { planSpeech, type SpeechPlan } from "./request.js";
import { returnOnAbort } from "./return-on-abort.js";
import { routeEndpoints } from "./routing.js";

const log = componentLogger("speech");

const CONTENT_TYPES = {
  pcm: `audio/pcm;rate=${SAMPLE_RATE};channels=1`,
  mp3: "audio/mpeg",
  // OpenAI's type for its WAV (the rate and channels are in the header).
  wav: "audio/wav",
} as const;

const FORMAT_ENUM = {
  pcm: AudioFormat.PCM,
  mp3: AudioFormat.MP3,
  wav: AudioFormat.WAV,
} as const;

export interface SpeechServiceDeps {
  store: Store;
  catalog: ModelCatalog;
  adapters: AdapterRegistry;
  governance: GovernanceCache;
  metering: MeteringConfig;
  /** Admission's "now" (rate window, budget days); the system clock unless a test pins one. */
  clock?: Clock;
  /** Keeps settlements and generation records for retry while the store is down. */
  retries?: RetryQueue;
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
function billedCharacters(characters: number, status: string, spoken: Spoken): number {
  if (status === "completed" || !spoken.reported) return characters;
  return Math.min(characters, spoken.characters);
}

export class SpeechServiceImpl implements ServiceImpl<typeof SpeechService> {
  private readonly generations: GenerationLog;
  private readonly retries: RetryQueue;
  /** Synthesize calls in progress, until their settlement and record are written (or kept). */
  readonly inFlight = new InFlight();

  constructor(private readonly deps: SpeechServiceDeps) {
    this.generations = new GenerationLog(deps.store);
    this.retries = deps.retries ?? new RetryQueue({ max: 10_000 });
  }

  /** Tries endpoints in order until one produces its first byte: fail-over is invisible to the client. */
  private async open(
    plan: SpeechPlan,
    endpoints: CatalogEndpoint[],
    signal: AbortSignal,
    tally: AudioTally,
    requestId: string | null,
  ) {
    let lastError: unknown;
    for (const endpoint of endpoints) {
      const spoken: Spoken = { characters: 0, reported: false };
      const attempt = new AbortController();
      const forward = () => attempt.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      try {
        const output = await this.deps.adapters.for(endpoint).start({
          model: plan.model,
          endpoint,
          segments: plan.segments,
          speed: plan.speed,
          format: sourceFormat(plan.format),
          references: plan.references.parts,
          options: plan.providerOptions[endpoint.provider],
          signal: attempt.signal,
          onSpoken: (n) => {
            spoken.reported = true;
            spoken.characters += n;
          },
        });
        const stream = audioBytes(output, plan.format, tally);
        const first = await stream.next();
        return {
          endpoint,
          stream,
          first,
          spoken,
          detach: () => signal.removeEventListener("abort", forward),
        };
      } catch (err) {
        signal.removeEventListener("abort", forward);
        attempt.abort();
        if (signal.aborted) throw new ConnectError("client cancelled the request", Code.Canceled);
        log.warn(
          { provider: endpoint.provider, err: String(err), requestId: requestId ?? undefined },
          "endpoint failed before first byte",
        );
        upstreamErrors.labels(endpoint.provider).inc();
        lastError = err;
      }
    }
    if (lastError instanceof ConnectError) throw lastError;
    throw withReason(
      Code.Unavailable,
      ErrorReason.UPSTREAM_ERROR,
      "Every eligible provider failed before producing audio",
    );
  }

  synthesize(req: SynthesizeRequest, ctx: HandlerContext): AsyncGenerator<SynthesizeResponse> {
    // Connect may leave a cancelled stream suspended without returning it: see returnOnAbort.
    return returnOnAbort(this.serve(req, ctx), ctx.signal);
  }

  private async *serve(
    req: SynthesizeRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<SynthesizeResponse> {
    const leave = this.inFlight.enter();
    try {
      yield* this.serveTracked(req, ctx);
    } finally {
      leave();
    }
  }

  private async *serveTracked(
    req: SynthesizeRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<SynthesizeResponse> {
    const started = performance.now();
    // The interceptor resolved the key from the call's metadata and already
    // applied region rule 1: nothing in the message can name another caller.
    const { principal, region } = callerOf(ctx);
    const validated = planSpeech(req, this.deps.catalog);
    const refusal = modelRefusal(principal.policy, validated.model);
    if (refusal) {
      admissionRefusals.labels("model").inc();
      throw permissionDenied(refusal.reason, refusal.message);
    }
    const filtered = await filterText(
      principal.filters,
      validated.segments,
      validated.references.parts,
      ctx.signal,
    );
    const plan: SpeechPlan = {
      ...validated,
      segments: filtered.segments,
      references: { ...validated.references, parts: filtered.references },
      characters: filtered.segments.reduce((n, s) => n + [...s.text].length, 0),
    };
    const { endpoints } = routeEndpoints(plan, policyRules(principal.policy, plan.model, plan.zdr));
    annotateActiveSpan({
      "gen_ai.operation.name": "text_to_speech",
      "gen_ai.request.model": plan.model.id,
      ...traceBodyAttributes(plan.trace),
    });
    const { admission, metered, rate } = await inSpan(
      "railgate.admission",
      { "db.system.name": "redis", "railgate.characters": plan.characters },
      () =>
        admitRequest(
          this.deps.store,
          principal,
          plan.characters,
          endpoints,
          this.deps.metering,
          new Date((this.deps.clock ?? systemClock).now()),
        ),
    );
    // Response metadata leaves with the first message, so the gateway has it before any audio.
    if (rate)
      for (const [name, value] of rateLimitHeaderValues(rate)) ctx.responseHeader.set(name, value);
    const tally: AudioTally = { bytes: 0, seconds: 0 };
    const outcome: StreamOutcome = { served: undefined, billed: 0, record: undefined };
    try {
      const opened = await this.open(
        plan,
        endpoints,
        ctx.signal,
        tally,
        // The gateway's request id, so this service's log lines join its access log.
        ctx.requestHeader.get(REQUEST_ID_HEADER),
      );
      outcome.served = opened.endpoint;
      yield* this.stream(
        principal,
        region,
        plan,
        opened,
        filtered.outcomes,
        tally,
        started,
        ctx.signal,
        outcome,
      );
    } finally {
      // The reservation becomes what was delivered (see billedCharacters); a request that never
      // produced audio releases it whole. Settlement and the generation record are one script:
      // the only round trip after the stream. Kept for retry while the store is down:
      // idempotent by the admission's id.
      const actual = settlement(admission, principal, outcome.billed, outcome.served);
      const record = outcome.record;
      await this.retries.submit(
        "settlement and generation record",
        {
          admission: admission.id,
          scope: admission.scope,
          keyHash: admission.keyHash,
          actual,
          record: record?.id,
        },
        () =>
          inSpan("railgate.settlement", { "db.system.name": "redis" }, () =>
            this.deps.store.settle(
              admission,
              actual,
              metered,
              record && this.generations.stored(record),
            ),
          ),
      );
    }
  }

  /** Shutdown: keeps retrying kept writes for at most `withinMs`, then logs what is lost. */
  drainRetries(withinMs: number): Promise<void> {
    return this.retries.drain(withinMs);
  }

  private async *stream(
    principal: Principal,
    region: RegionName,
    plan: SpeechPlan,
    opened: Awaited<ReturnType<SpeechServiceImpl["open"]>>,
    outcomes: FilteredText["outcomes"],
    tally: AudioTally,
    started: number,
    signal: AbortSignal,
    outcome: StreamOutcome,
  ): AsyncGenerator<SynthesizeResponse> {
    const { endpoint, stream } = opened;
    const generation = create(GenerationSchema, {
      id: `gen-${newId()}`,
      model: plan.model.id,
      provider: endpoint.provider,
      byok: endpoint.byok,
      characters: plan.characters,
      costUsd: (plan.characters * endpoint.price_per_million_chars) / 1_000_000,
      format: FORMAT_ENUM[plan.format],
      sessionId: plan.sessionId,
      user: plan.user,
      trace: plan.trace,
      filterOutcomes: outcomes,
      keyHash: principal.key.hash,
      workspaceId: principal.key.workspaceId,
      voice: plan.voice,
      speed: plan.speed,
      // Every endpoint is reached from the deployment the request entered: the
      // region it was served in is its ingress region (what allowed_data_regions governs).
      dataRegion: region,
      createdAt: nowTimestamp(),
    });
    let status = "failed";
    try {
      yield create(SynthesizeResponseSchema, {
        event: {
          case: "start",
          value: {
            format: generation.format,
            contentType: CONTENT_TYPES[plan.format],
            sampleRate: SAMPLE_RATE,
            channels: 1,
            generationId: generation.id,
            model: plan.model.id,
            provider: endpoint.provider,
          },
        },
      });
      if (!opened.first.done) {
        generation.timeToFirstByteMs = performance.now() - started;
        speechTimeToFirstByte
          .labels(endpoint.provider)
          .observe(generation.timeToFirstByteMs / 1000);
        yield create(SynthesizeResponseSchema, {
          event: { case: "audio", value: opened.first.value },
        });
      }
      // After the first piece, pieces that pile up while the hop is busy go out merged.
      for await (const piece of coalesce(stream, MAX_CHUNK_BYTES)) {
        yield create(SynthesizeResponseSchema, { event: { case: "audio", value: piece } });
      }
      status = "completed";
    } finally {
      opened.detach();
      if (status !== "completed" && signal.aborted) status = "cancelled";
      await stream.return(undefined);
      generation.status = status;
      speechDuration
        .labels(endpoint.provider, status)
        .observe((performance.now() - started) / 1000);
      generation.bytes = BigInt(tally.bytes);
      generation.durationSeconds = tally.seconds;
      outcome.billed = billedCharacters(plan.characters, status, opened.spoken);
      // The record tells what was charged: less than the whole input for a stream cut short.
      generation.costUsd = (outcome.billed * endpoint.price_per_million_chars) / 1_000_000;
      outcome.record = generation;
    }
  }

  async listModels() {
    return { models: catalogToProto(this.deps.catalog) };
  }

  async getGeneration(req: { id: string }, ctx: HandlerContext) {
    if (!req.id) throw invalidArgument("id is required");
    // Records are read with a standard key of the workspace that made them.
    const { principal } = callerOf(ctx);
    const generation = await this.generations.get(principal.scope, req.id);
    if (!generation)
      throw notFound(
        ErrorReason.GENERATION_NOT_FOUND,
        `generation ${req.id.slice(0, 80)} not found`,
      );
    return { generation };
  }

  async explain(req: { keyHash: string; model: string; region: string }) {
    if (!isKeyHash(req.keyHash))
      throw invalidArgument("key_hash must be 64 lowercase hex characters");
    const principal = await this.deps.governance.get(req.keyHash);
    if (!principal)
      throw notFound(ErrorReason.KEY_NOT_FOUND, `key ${quote(req.keyHash)} not found`);
    return explain(this.deps.store, this.deps.catalog, principal, req.model, req.region);
  }
}
