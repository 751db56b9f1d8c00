import type { AudioFormat } from "../../../gen/railgate/speech/v1/speech_pb.js";

/** What a clip's first message says, kept with the clip: every reader's response starts with it. */
export interface ClipStart {
  format: AudioFormat;
  contentType: string;
  sampleRate: number;
  channels: number;
  provider: string;
}

/**
 * One synthesis that identical requests share (request collapsing): the request that missed the
 * cache leads it, and feeds every piece of audio here as it leaves for its own client; a request
 * that joins reads what was already produced, then the rest as it comes. Pieces are kept until
 * the flight ends (a late joiner needs them from the start, and a complete clip is stored).
 */
export class Flight {
  start: ClipStart | undefined;
  readonly chunks: Uint8Array[] = [];
  bytes = 0;
  state: "running" | "complete" | "failed" = "running";
  /** Seconds of audio, once complete (the leader's record knows it). */
  durationSeconds = 0;
  /** The clip outgrew the workspace's budget: it is delivered, never stored. */
  tooLarge = false;
  /** Requests that joined (their reads index into `chunks`). */
  readers = 0;
  private readonly waiting = new Set<() => void>();

  begin(start: ClipStart): void {
    this.start = start;
    this.notify();
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    // A clip that will never be stored, and that nobody joined (nobody can any more), is not kept.
    if (this.tooLarge && this.readers === 0) {
      this.chunks.length = 0;
      return;
    }
    this.chunks.push(chunk);
    this.notify();
  }

  end(state: "complete" | "failed"): void {
    if (this.state !== "running") return;
    this.state = state;
    this.notify();
  }

  /** Resolves at the flight's next change, or at once when the reader's signal aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        signal.removeEventListener("abort", done);
        this.waiting.delete(done);
        resolve();
      };
      this.waiting.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private notify(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const wake of waiting) wake();
  }
}
