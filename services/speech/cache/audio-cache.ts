import {
  audioCacheEvictions,
  audioCacheLookups,
  audioCacheStores,
} from "../../../domain/metrics.js";
import { GenerationStatus } from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { SynthesizeResponse } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import type { AudioCacheConfig } from "../../../platform/config/config.js";
import { componentLogger } from "../../../platform/observability/logger.js";
import type { AudioClipStore, StoredClip } from "../../../store/audio-clips/types.js";
import { MAX_CHUNK_BYTES } from "../audio/index.js";
import { audioCacheKey } from "./cache-key.js";
import {
  type CachedAudio,
  type CacheOutcome,
  type CacheRequest,
  cachedResponse,
} from "./cached-response.js";
import { type ClipStart, Flight } from "./flight.js";

const log = componentLogger("audio-cache");

/** A stored clip's description (the store keeps it as opaque text beside the audio). */
interface ClipMeta extends ClipStart {
  v: 1;
  pricePerMillion: number;
  durationSeconds: number;
}

/**
 * A synthesis other identical requests may join: it is shown each message the leader sends
 * (synchronously, beside the leader's own stream: no generator layer per chunk), then told
 * how the leader's request ended.
 */
export interface CacheLeader {
  see(message: SynthesizeResponse): void;
  /** The clip is stored when the leader's record says completed; otherwise nothing is kept. */
  finish(outcome: CacheOutcome): void;
}

/**
 * What the cache decided for one request. `serve` is set when the cache answers it (a stored
 * clip, or a synthesis in progress that it joins); otherwise, for an opted-in workspace, the
 * request synthesizes as the `lead`, which shares its audio with requests that join and stores
 * the clip once complete. `end` is called when the request ends, whatever happened.
 */
export interface CacheTicket {
  serve?: (outcome: CacheOutcome) => AsyncGenerator<SynthesizeResponse>;
  lead?: CacheLeader;
  end(): void;
}

/** Pieces merged into chunks of at most `max` bytes, the unit the store keeps and hits send. */
function rechunk(pieces: readonly Uint8Array[], max: number): Buffer[] {
  const out: Buffer[] = [];
  let batch: Uint8Array[] = [];
  let size = 0;
  for (const p of pieces) {
    if (size + p.byteLength > max && batch.length > 0) {
      out.push(Buffer.concat(batch, size));
      batch = [];
      size = 0;
    }
    batch.push(p);
    size += p.byteLength;
  }
  if (batch.length > 0) out.push(Buffer.concat(batch, size));
  return out;
}

function readMeta(clip: StoredClip): ClipMeta | undefined {
  try {
    const meta = JSON.parse(clip.meta) as ClipMeta;
    return meta.v === 1 ? meta : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The audio cache of POST /audio/speech (docs/api.md "Audio cache"): opt-in per workspace, never
 * shared across workspaces, consulted after admission (so guardrails, budgets and rate limits
 * hold for hits too). Identical requests that arrive while one is being synthesized in this
 * process make one synthesis (request collapsing); across replicas each process synthesizes its
 * own first copy, and the store makes every later request a hit.
 */
export class AudioCache {
  /** Syntheses in progress (and complete ones until stored), by workspace and key. */
  private readonly flights = new Map<string, Flight>();

  constructor(
    private readonly clips: AudioClipStore,
    private readonly config: AudioCacheConfig,
  ) {}

  /** Undefined when the cache has no say: the workspace did not opt in, or a rule forbids it. */
  async lookup(req: CacheRequest): Promise<CacheTicket | undefined> {
    const { principal, plan } = req;
    // A request asking for zero data retention (provider.zdr) is not kept either.
    if (!principal.audioCache || principal.policy.forbidAudioCache || plan.zdr) return undefined;
    const scope = principal.scope;
    const hash = audioCacheKey(plan, req.endpoints);
    const id = `${scope}\u0000${hash}`;
    const joined = this.flights.get(id);
    if (joined) return this.join(req, joined);
    let stored: StoredClip | undefined;
    try {
      stored = await this.clips.get(scope, hash);
    } catch (err) {
      // The cache is an optimisation: a store that fails to answer makes a miss, not an error.
      log.warn({ err: String(err) }, "audio cache read failed: synthesizing");
    }
    const meta = stored && readMeta(stored);
    if (stored && meta) {
      audioCacheLookups.labels("hit").inc();
      const audio: CachedAudio = {
        kind: "stored",
        start: meta,
        pricePerMillion: meta.pricePerMillion,
        chunks: stored.chunks,
        durationSeconds: meta.durationSeconds,
      };
      return this.serving(req, audio);
    }
    // Another identical request may have started synthesizing while this one read the store.
    const raced = this.flights.get(id);
    if (raced) return this.join(req, raced);
    audioCacheLookups.labels("miss").inc();
    // Off the request's path, beside a synthesis that costs far more: a count for the console.
    this.clips.count(scope, "misses", this.config.ttlSeconds * 1000).catch(() => {});
    const flight = new Flight();
    this.flights.set(id, flight);
    return {
      lead: this.leader(id, scope, hash, flight),
      end: () => this.abandon(id, flight),
    };
  }

  private join(req: CacheRequest, flight: Flight): CacheTicket {
    audioCacheLookups.labels("collapsed").inc();
    flight.readers++;
    // Off the request's path: a count for the console, never worth waiting for.
    this.clips
      .count(req.principal.scope, "collapsed", this.config.ttlSeconds * 1000)
      .catch(() => {});
    return this.serving(req, { kind: "flight", flight });
  }

  private serving(req: CacheRequest, audio: CachedAudio): CacheTicket {
    return {
      serve: (outcome) => cachedResponse(req, audio, this.config.priceRatio, outcome),
      end: () => {},
    };
  }

  private leader(id: string, scope: string, hash: string, flight: Flight): CacheLeader {
    return {
      see: (message) => {
        const event = message.event;
        if (event.case === "start") {
          flight.begin({
            format: event.value.format,
            contentType: event.value.contentType,
            sampleRate: event.value.sampleRate,
            channels: event.value.channels,
            provider: event.value.provider,
          });
        } else if (event.case === "audio") {
          if (
            !flight.tooLarge &&
            flight.bytes + event.value.byteLength > this.config.workspaceBytes
          ) {
            // Delivered to whoever reads it already, but never stored: let no one else join.
            flight.tooLarge = true;
            if (this.flights.get(id) === flight) this.flights.delete(id);
          }
          flight.push(event.value);
        }
      },
      finish: (outcome) => {
        if (outcome.record && outcome.record.status === GenerationStatus.COMPLETED)
          this.complete(id, scope, hash, flight, outcome);
        else this.abandon(id, flight);
      },
    };
  }

  /** The leader did not complete (failed, cancelled, refused before audio): nothing is kept. */
  private abandon(id: string, flight: Flight): void {
    if (flight.state !== "running") return;
    flight.end("failed");
    if (this.flights.get(id) === flight) this.flights.delete(id);
  }

  /**
   * The clip is complete: readers finish, and it is stored. The flight stays joinable until the
   * store has it, so a request arriving in between still gets the clip without synthesizing.
   */
  private complete(
    id: string,
    scope: string,
    hash: string,
    flight: Flight,
    outcome: CacheOutcome,
  ): void {
    flight.durationSeconds = outcome.record?.durationSeconds ?? 0;
    flight.end("complete");
    const start = flight.start;
    const release = () => {
      if (this.flights.get(id) === flight) this.flights.delete(id);
    };
    if (flight.tooLarge || !start || flight.bytes === 0) {
      if (flight.tooLarge) audioCacheStores.labels("too_large").inc();
      release();
      return;
    }
    const meta: ClipMeta = {
      v: 1,
      ...start,
      pricePerMillion: outcome.served?.pricePerMillionChars ?? 0,
      durationSeconds: flight.durationSeconds,
    };
    this.clips
      .put(scope, hash, JSON.stringify(meta), rechunk(flight.chunks, MAX_CHUNK_BYTES), {
        budgetBytes: this.config.workspaceBytes,
        ttlMs: this.config.ttlSeconds * 1000,
      })
      .then((result) => {
        audioCacheStores.labels(result.outcome.replace("-", "_")).inc();
        if (result.outcome === "stored" && result.evicted > 0)
          audioCacheEvictions.inc(result.evicted);
      })
      .catch((err: unknown) => {
        audioCacheStores.labels("failed").inc();
        log.warn({ err: String(err) }, "audio cache write failed: the clip is not cached");
      })
      .finally(release);
  }

  /** What the workspace's cache holds and how it answered (the console's workspace view). */
  async usage(scope: string) {
    return { ...(await this.clips.usage(scope)), budgetBytes: this.config.workspaceBytes };
  }
}
