import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { AudioFormat, GenerationSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  type SpeechService,
  type SynthesizeRequest,
  type SynthesizeResponse,
  SynthesizeResponseSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  invalidArgument,
  notFound,
  permissionDenied,
  unauthenticated,
  withHttpStatus,
} from "../common/errors.js";
import { isKeyHash, newId } from "../common/ids.js";
import { componentLogger } from "../common/logger.js";
import type { Store } from "../common/store/types.js";
import { nowTimestamp } from "../common/time.js";
import { isRegionName } from "../policy/types.js";
import { admitRequest, type MeteringConfig, settlement } from "./admission.js";
import { SAMPLE_RATE } from "./audio/index.js";
import { type AudioTally, audioBytes } from "./audio-stream.js";
import { catalogToProto } from "./catalog/catalog-proto.js";
import type { ModelCatalog } from "./catalog/model-catalog.js";
import type { CatalogEndpoint } from "./catalog/types.js";
import { type FilteredText, filterText } from "./content-filtering.js";
import type { AdapterRegistry } from "./engines/registry.js";
import { explain } from "./explain.js";
import { GenerationLog } from "./generations.js";
import type { GovernanceCache, Principal } from "./governance-cache.js";
import { modelRefusal, policyRules } from "./policy-rules.js";
import { planSpeech, type SpeechPlan } from "./request.js";
import { returnOnAbort } from "./return-on-abort.js";
import { routeEndpoints } from "./routing.js";

const log = componentLogger("speech");

const CONTENT_TYPES = {
  pcm: `audio/pcm;rate=${SAMPLE_RATE};channels=1`,
  mp3: "audio/mpeg",
} as const;

export interface SpeechServiceDeps {
  store: Store;
  catalog: ModelCatalog;
  adapters: AdapterRegistry;
  governance: GovernanceCache;
  metering: MeteringConfig;
}

export class SpeechServiceImpl implements ServiceImpl<typeof SpeechService> {
  private readonly generations: GenerationLog;

  constructor(private readonly deps: SpeechServiceDeps) {
    this.generations = new GenerationLog(deps.store);
  }

  /** The caller is resolved from its key here; a caller can never hand in a policy of its own. */
  private async principal(keyHash: string): Promise<Principal> {
    if (!isKeyHash(keyHash)) throw unauthenticated("Invalid API key");
    const p = await this.deps.governance.get(keyHash);
    if (!p) throw unauthenticated("Invalid API key");
    if (p.key.disabled) throw unauthenticated("API key is disabled");
    if (p.key.kind !== KeyKind.STANDARD) {
      throw permissionDenied("Management keys cannot call speech: use a standard API key");
    }
    return p;
  }

  /** A governed request must arrive through a region its policy allows: checked before any work. */
  private checkRegion(p: Principal, region: string): void {
    if (!isRegionName(region))
      throw invalidArgument('ingress_region must be "global", "europe" or "us"');
    const allowed = p.policy.regions;
    if (allowed && !allowed.has(region)) {
      const by = p.policy.guardrails
        .filter((g) => g.guardrail.allowedDataRegions)
        .map((g) => `"${g.guardrail.name}"`)
        .join(", ");
      throw permissionDenied(
        `Requests through region "${region}" are not allowed by guardrail ${by} (allowed_data_regions: ${[...allowed].join(", ") || "none"})`,
      );
    }
  }

  /** Tries endpoints in order until one produces its first byte: fail-over is invisible to the client. */
  private async open(
    plan: SpeechPlan,
    endpoints: CatalogEndpoint[],
    signal: AbortSignal,
    tally: AudioTally,
  ) {
    let lastError: unknown;
    for (const endpoint of endpoints) {
      const attempt = new AbortController();
      const forward = () => attempt.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      try {
        const output = await this.deps.adapters.for(endpoint).start({
          model: plan.model,
          endpoint,
          segments: plan.segments,
          speed: plan.speed,
          format: plan.format,
          references: plan.references.parts,
          options: plan.providerOptions[endpoint.provider],
          signal: attempt.signal,
        });
        const stream = audioBytes(output, plan.format, tally);
        const first = await stream.next();
        return {
          endpoint,
          stream,
          first,
          detach: () => signal.removeEventListener("abort", forward),
        };
      } catch (err) {
        signal.removeEventListener("abort", forward);
        attempt.abort();
        if (signal.aborted) throw new ConnectError("client cancelled the request", Code.Canceled);
        log.warn(
          { provider: endpoint.provider, err: String(err) },
          "endpoint failed before first byte",
        );
        lastError = err;
      }
    }
    if (lastError instanceof ConnectError) throw lastError;
    throw withHttpStatus(
      Code.Unavailable,
      502,
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
    const started = performance.now();
    const principal = await this.principal(req.keyHash);
    this.checkRegion(principal, req.ingressRegion);
    const validated = planSpeech(req, this.deps.catalog);
    const refusal = modelRefusal(principal.policy, validated.model);
    if (refusal) throw permissionDenied(refusal);
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
    const { admission, metered } = await admitRequest(
      this.deps.store,
      principal,
      plan.characters,
      endpoints,
      this.deps.metering,
    );
    const tally: AudioTally = { bytes: 0, seconds: 0 };
    let served: CatalogEndpoint | undefined;
    try {
      const opened = await this.open(plan, endpoints, ctx.signal, tally);
      served = opened.endpoint;
      yield* this.stream(principal, plan, opened, filtered.outcomes, tally, started, ctx.signal);
    } finally {
      // Served audio is paid for in full (the provider did the work); a request that never
      // produced audio releases its whole reservation.
      await this.deps.store
        .settle(admission, settlement(admission, principal, plan.characters, served), metered)
        .catch((err: unknown) => log.error({ err }, "could not settle a reservation"));
    }
  }

  private async *stream(
    principal: Principal,
    plan: SpeechPlan,
    opened: Awaited<ReturnType<SpeechServiceImpl["open"]>>,
    outcomes: FilteredText["outcomes"],
    tally: AudioTally,
    started: number,
    signal: AbortSignal,
  ): AsyncGenerator<SynthesizeResponse> {
    const { endpoint, stream } = opened;
    const generation = create(GenerationSchema, {
      id: `gen-${newId()}`,
      model: plan.model.id,
      provider: endpoint.provider,
      characters: plan.characters,
      costUsd: (plan.characters * endpoint.price_per_million_chars) / 1_000_000,
      format: plan.format === "mp3" ? AudioFormat.MP3 : AudioFormat.PCM,
      sessionId: plan.sessionId,
      user: plan.user,
      trace: plan.trace,
      filterOutcomes: outcomes,
      keyHash: principal.key.hash,
      workspaceId: principal.key.workspaceId,
      voice: plan.voice,
      speed: plan.speed,
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
        yield create(SynthesizeResponseSchema, {
          event: { case: "audio", value: opened.first.value },
        });
      }
      for await (const piece of stream) {
        yield create(SynthesizeResponseSchema, { event: { case: "audio", value: piece } });
      }
      status = "completed";
    } finally {
      opened.detach();
      if (status !== "completed" && signal.aborted) status = "cancelled";
      await stream.return(undefined);
      generation.status = status;
      generation.bytes = BigInt(tally.bytes);
      generation.durationSeconds = tally.seconds;
      await this.generations.put(principal.scope, generation).catch((err: unknown) => {
        log.error({ err, id: generation.id }, "could not store generation record");
      });
    }
  }

  async listModels() {
    return { models: catalogToProto(this.deps.catalog) };
  }

  async getGeneration(req: { id: string; keyHash: string }) {
    if (!req.id) throw invalidArgument("id is required");
    // Records are read with a standard key of the workspace that made them.
    const principal = await this.principal(req.keyHash);
    const generation = await this.generations.get(principal.scope, req.id);
    if (!generation) throw notFound(`generation ${req.id.slice(0, 80)} not found`);
    return { generation };
  }

  async explain(req: { keyHash: string; model: string; region: string }) {
    if (!isKeyHash(req.keyHash))
      throw invalidArgument("key_hash must be 64 lowercase hex characters");
    const principal = await this.deps.governance.get(req.keyHash);
    if (!principal) throw notFound(`key ${req.keyHash} not found`);
    return explain(this.deps.store, this.deps.catalog, principal, req.model, req.region);
  }
}
