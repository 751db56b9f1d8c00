import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { KeyKind } from "../../gen/railgate/account/v1/account_pb.js";
import { AudioFormat, GenerationSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import type {
  SpeechService,
  SynthesizeRequest,
  SynthesizeResponse,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { SynthesizeResponseSchema } from "../../gen/railgate/speech/v1/speech_service_pb.js";
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
import { SAMPLE_RATE } from "./audio/index.js";
import { type AudioTally, audioBytes } from "./audio-stream.js";
import { catalogToProto } from "./catalog/catalog-proto.js";
import type { ModelCatalog } from "./catalog/model-catalog.js";
import type { CatalogEndpoint } from "./catalog/types.js";
import type { AdapterRegistry } from "./engines/registry.js";
import { GenerationLog } from "./generations.js";
import { planSpeech, type SpeechPlan } from "./request.js";
import { routeEndpoints } from "./routing.js";

const log = componentLogger("speech");

const CONTENT_TYPES = {
  pcm: `audio/pcm;rate=${SAMPLE_RATE};channels=1`,
  mp3: "audio/mpeg",
} as const;

export class SpeechServiceImpl implements ServiceImpl<typeof SpeechService> {
  private readonly generations: GenerationLog;

  constructor(
    private readonly store: Store,
    private readonly catalog: ModelCatalog,
    private readonly adapters: AdapterRegistry,
  ) {
    this.generations = new GenerationLog(store);
  }

  /** The caller is resolved from its key here; a caller can never hand in a policy of its own. */
  private async principal(keyHash: string) {
    if (!isKeyHash(keyHash)) throw unauthenticated("key_hash must identify an API key");
    const gov = await this.store.loadGovernance(keyHash);
    if (!gov) throw unauthenticated("Invalid API key");
    if (gov.key.disabled) throw unauthenticated("API key is disabled");
    if (gov.key.kind !== KeyKind.STANDARD) {
      throw permissionDenied("Management keys cannot call speech: use a standard API key");
    }
    return gov;
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
        const output = await this.adapters.for(endpoint).start({
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

  async *synthesize(
    req: SynthesizeRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<SynthesizeResponse> {
    const started = performance.now();
    const gov = await this.principal(req.keyHash);
    const plan = planSpeech(req, this.catalog);
    const { endpoints } = routeEndpoints(plan);
    const tally: AudioTally = { bytes: 0, seconds: 0 };
    const opened = await this.open(plan, endpoints, ctx.signal, tally);
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
      keyHash: gov.key.hash,
      workspaceId: gov.key.workspaceId,
      voice: plan.voice,
      speed: plan.speed,
      createdAt: nowTimestamp(),
      status: "failed",
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
    } catch (err) {
      if (ctx.signal.aborted) status = "cancelled";
      throw err;
    } finally {
      opened.detach();
      if (ctx.signal.aborted && status !== "completed") status = "cancelled";
      await stream.return(undefined);
      generation.status = status;
      generation.bytes = BigInt(tally.bytes);
      generation.durationSeconds = tally.seconds;
      await this.generations.put(gov.key.workspaceId, generation).catch((err: unknown) => {
        log.error({ err, id: generation.id }, "could not store generation record");
      });
    }
  }

  async listModels() {
    return { models: catalogToProto(this.catalog) };
  }

  async getGeneration(req: { id: string; keyHash: string }) {
    if (!req.id) throw invalidArgument("id is required");
    // Records are read with a standard key of the workspace that made them.
    const gov = await this.principal(req.keyHash);
    const generation = await this.generations.get(gov.key.workspaceId, req.id);
    if (!generation) throw notFound(`generation ${req.id.slice(0, 80)} not found`);
    return { generation };
  }
}
