import type { ReferenceInput, SynthesisSegment } from "../../../domain/catalog/speech-input.js";
import type { CatalogEndpoint, CatalogModel } from "../../../domain/catalog/types.js";
import type { SourceFormat } from "../audio/index.js";

export type { ReferenceInput, SynthesisSegment };

export interface AdapterRequest {
  model: CatalogModel;
  endpoint: CatalogEndpoint;
  segments: SynthesisSegment[];
  /** 1 is neutral; only sent to endpoints with speed control. */
  speed: number;
  format: SourceFormat;
  references: ReferenceInput[];
  /** Provider-specific passthrough options for this endpoint's provider only. */
  options?: Record<string, unknown>;
  signal: AbortSignal;
  /**
   * Adapters that know how much of the input their delivered audio covers report it here, in
   * characters, as it is delivered; a stream cut short is billed for that much. Adapters that
   * cannot tell (upstreams, which bill the whole input once they accept it) never call it.
   */
  onSpoken?: (characters: number) => void;
}

/**
 * An adapter either yields 24 kHz mono PCM for the service to encode, or bytes
 * already in the requested format (upstreams that encode themselves).
 */
export type AdapterOutput =
  | { kind: "pcm"; samples: AsyncIterable<Int16Array> }
  | {
      kind: "encoded";
      bytes: AsyncIterable<Uint8Array>;
      /**
       * Seconds of speech in the bytes so far, when the adapter knows them exactly (the embedded
       * engine encodes in its workers); otherwise they are measured from the bytes.
       */
      seconds?: () => number;
      /**
       * True when a read already returns everything that arrived since the last one (a Node
       * stream's body: its buffer is handed over whole): the service then relays the bytes as
       * they come, without merging pieces a second time (services/speech/coalesce.ts).
       */
      merged?: boolean;
    };

/**
 * One interface for every engine and upstream provider. `start` resolves once
 * the provider has accepted the request and audio is on its way: a failure
 * before that lets the service fail over to the next eligible endpoint.
 */
export interface SpeechAdapter {
  start(request: AdapterRequest): Promise<AdapterOutput>;
  /** Releases what the adapter holds open (an upstream's keep-alive connections). */
  close?(): Promise<void>;
}
