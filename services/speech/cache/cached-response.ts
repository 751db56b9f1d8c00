import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { CatalogEndpoint } from "../../../domain/catalog/types.js";
import { type RegionName, regionValue } from "../../../domain/enums.js";
import { newGenerationId } from "../../../domain/ids.js";
import { ErrorReason } from "../../../gen/railgate/common/v1/error_info_pb.js";
import {
  type FilterOutcome,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import {
  type SynthesizeResponse,
  SynthesizeResponseSchema,
} from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { decidingOutcome } from "../../../governance/content-filtering.js";
import type { Principal } from "../../../governance/governance-cache.js";
import { governedBy } from "../../../governance/policy/governed-by.js";
import { withReason } from "../../../platform/rpc/errors.js";
import { nowTimestamp } from "../../../platform/time.js";
import { recordedMs } from "../../../store/request-log/generations.js";
import type { SpeechPlan } from "../request.js";
import type { ClipStart, Flight } from "./flight.js";

/** The request the cache serves, as the service resolved it (admission already passed). */
export interface CacheRequest {
  principal: Principal;
  region: RegionName;
  plan: SpeechPlan;
  /** The endpoints routing chose, in order (part of the key, and the billing's reference). */
  endpoints: CatalogEndpoint[];
  outcomes: FilterOutcome[];
  /** performance.now() when the request reached the service (time to first byte). */
  started: number;
  signal: AbortSignal;
}

/** The service's outcome of a stream: who served it (what it is billed at), how much, its record. */
export interface CacheOutcome {
  served: CatalogEndpoint | undefined;
  billed: number;
  record: Generation | undefined;
}

/** Where a served-from-cache response takes its audio from: a stored clip or a running flight. */
export type CachedAudio =
  | {
      kind: "stored";
      start: ClipStart;
      pricePerMillion: number;
      chunks: Buffer[];
      durationSeconds: number;
    }
  | { kind: "flight"; flight: Flight };

/** The leader failed or was cancelled: what a request that joined it is told. */
function abandoned() {
  return withReason(
    Code.Unavailable,
    ErrorReason.UPSTREAM_ERROR,
    "The identical request whose synthesis this one shared (audio cache) ended before its audio was complete (cancelled by its client, or the provider failed); nothing was cached: retry",
  );
}

async function* flightAudio(flight: Flight, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  let next = 0;
  for (;;) {
    while (next < flight.chunks.length) yield flight.chunks[next++] as Uint8Array;
    if (flight.state === "complete") return;
    if (flight.state === "failed") throw abandoned();
    if (signal.aborted) return;
    await flight.changed(signal);
  }
}

async function flightStart(flight: Flight, signal: AbortSignal): Promise<ClipStart | undefined> {
  while (!flight.start) {
    if (flight.state === "failed") throw abandoned();
    if (signal.aborted) return undefined;
    await flight.changed(signal);
  }
  return flight.start;
}

/**
 * A response served from the audio cache: the first message as the clip's own, then its audio
 * (all of a stored clip at once; a flight's as it is produced). Billed at `priceRatio` of what
 * the endpoint that produced the clip charges; the record says cached, with what that saved in
 * cache_discount. A stream cut short is billed for the share of the clip delivered; a request
 * whose leader failed is billed nothing (the error says why).
 */
export async function* cachedResponse(
  req: CacheRequest,
  audio: CachedAudio,
  priceRatio: number,
  outcome: CacheOutcome,
): AsyncGenerator<SynthesizeResponse> {
  const { principal, plan, signal } = req;
  const generation = create(GenerationSchema, {
    id: newGenerationId(),
    model: plan.model.id,
    characters: plan.characters,
    sessionId: plan.sessionId,
    user: plan.user,
    trace: plan.trace,
    filterOutcomes: req.outcomes,
    guardrailId: decidingOutcome(req.outcomes)?.guardrailId ?? "",
    policyId: decidingOutcome(req.outcomes)?.policyId ?? "",
    keyHash: principal.key.hash,
    workspaceId: principal.key.workspaceId,
    voice: plan.voice,
    speed: plan.speed,
    dataRegion: regionValue(req.region),
    governedBy: governedBy(principal.policy),
    cached: true,
    status: GenerationStatus.FAILED,
    createdAt: nowTimestamp(),
  });
  outcome.record = generation;
  let delivered = 0;
  let status = GenerationStatus.FAILED;
  let start: ClipStart | undefined;
  let pricePerMillion = 0;
  try {
    start = audio.kind === "stored" ? audio.start : await flightStart(audio.flight, signal);
    if (!start) return;
    const producer = req.endpoints.find((e) => e.provider === start?.provider);
    pricePerMillion =
      audio.kind === "stored" ? audio.pricePerMillion : (producer?.pricePerMillionChars ?? 0);
    generation.provider = start.provider;
    generation.servedDataPolicy = producer?.dataPolicy;
    generation.format = start.format;
    yield create(SynthesizeResponseSchema, {
      event: {
        case: "start",
        value: {
          format: start.format,
          contentType: start.contentType,
          sampleRate: start.sampleRate,
          channels: start.channels,
          generationId: generation.id,
          model: plan.model.id,
          provider: start.provider,
        },
      },
    });
    const chunks = audio.kind === "stored" ? audio.chunks : flightAudio(audio.flight, signal);
    for await (const chunk of chunks) {
      if (delivered === 0)
        generation.timeToFirstByteMs = recordedMs(performance.now() - req.started);
      delivered += chunk.byteLength;
      yield create(SynthesizeResponseSchema, { event: { case: "audio", value: chunk } });
    }
    if (!signal.aborted) status = GenerationStatus.COMPLETED;
  } finally {
    if (status !== GenerationStatus.COMPLETED && signal.aborted)
      status = GenerationStatus.CANCELLED;
    const total =
      audio.kind === "stored"
        ? audio.chunks.reduce((n, c) => n + c.byteLength, 0)
        : audio.flight.bytes;
    const duration = audio.kind === "stored" ? audio.durationSeconds : audio.flight.durationSeconds;
    generation.status = status;
    generation.bytes = BigInt(delivered);
    generation.durationSeconds =
      status === GenerationStatus.COMPLETED
        ? duration
        : total > 0
          ? (duration * delivered) / total
          : 0;
    // Billed for the share of the clip delivered; nothing when the shared synthesis failed.
    const billed =
      status === GenerationStatus.COMPLETED
        ? plan.characters
        : status === GenerationStatus.CANCELLED && total > 0 && audio.kind === "stored"
          ? Math.floor((plan.characters * delivered) / total)
          : 0;
    const charged = pricePerMillion * priceRatio;
    generation.costUsd = (billed * charged) / 1_000_000;
    generation.cacheDiscount = (billed * (pricePerMillion - charged)) / 1_000_000;
    const reference = req.endpoints.find((e) => e.provider === start?.provider) ?? req.endpoints[0];
    // The cache serves it, not the provider: never BYOK, always at the cache price.
    outcome.served =
      billed > 0 && reference
        ? { ...reference, pricePerMillionChars: charged, byok: false }
        : undefined;
    outcome.billed = billed;
  }
}
