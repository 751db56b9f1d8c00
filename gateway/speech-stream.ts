import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { Code } from "@connectrpc/connect";
import { pickRateLimitHeaders } from "../domain/rate-limit-headers.js";
import type { SynthesizeRequest } from "../gen/railgate/speech/v1/speech_service_pb.js";
import { componentLogger } from "../platform/observability/logger.js";
import { REQUEST_ID_HEADER } from "../platform/rpc/request-id.js";
import type { RequestContext } from "./context.js";
import { STATUS_BY_CODE } from "./error-status.js";
import { HttpError } from "./http-error.js";
import { StreamDeadline, TIMED_OUT } from "./stream-deadline.js";

const log = componentLogger("gateway");

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * Relays one Synthesize stream as the HTTP response: the first message (metadata, sent by the
 * service once the first audio is in hand) decides the status and headers, then each audio
 * chunk goes out as it arrives. A speech stream has no overall deadline (it lasts as long as
 * the audio), so a service that stops answering (a frozen process, a hung hop) would hold the
 * request open for good: the first message must come within RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS
 * (524, like a unary call past its deadline), and each next one within RAILGATE_SPEECH_IDLE_TIMEOUT_MS
 * (the status is gone by then: the response is cut, so the client sees an aborted body). Either
 * way the call is cancelled, and the speech service settles what it served on its abort path.
 */
export async function streamSpeech(ctx: RequestContext, req: SynthesizeRequest): Promise<void> {
  const { firstMessageTimeoutMs, idleTimeoutMs } = ctx.speechStream;
  const res = ctx.res;
  // The call runs on the request's own signal (no AbortController of its own): it ends when
  // the client goes away, and when a deadline passes or the stream is given up (ctx.abort).
  const deadline = new StreamDeadline(() => ctx.abort(STREAM_DEADLINE));
  let finished = false;
  try {
    let responseHeader: Headers | undefined;
    const stream = ctx.clients.speech
      .synthesize(req, {
        ...ctx.call,
        onHeader: (header) => {
          responseHeader = header;
        },
      })
      [Symbol.asyncIterator]();
    // Errors before the first message still become JSON errors with their status.
    const first = await deadline.within(stream.next(), firstMessageTimeoutMs);
    if (first === TIMED_OUT) {
      throw new HttpError(
        STATUS_BY_CODE[Code.DeadlineExceeded],
        `Request timed out: the speech service produced no audio within ${seconds(firstMessageTimeoutMs)}`,
      );
    }
    if (first.done || first.value.event.case !== "start") {
      throw new HttpError(502, "Speech service ended the stream before any audio");
    }
    const start = first.value.event.value;
    res.writeHead(200, {
      "content-type": start.contentType,
      "x-generation-id": start.generationId,
      "x-railgate-model": start.model,
      "x-railgate-provider": start.provider,
      "cache-control": "no-store",
      // The key's rate window, as admission left it (read once the first message is in:
      // the service sets it before that message, on every transport).
      ...(responseHeader ? pickRateLimitHeaders(responseHeader) : {}),
    });
    // No flushHeaders(): the first audio is already in hand (the service sends "start"
    // only once it is), so the head leaves with it in one write instead of two.
    const out = new TurnWriter(res);
    try {
      // Each chunk goes out as it arrives; backpressure from a slow client pauses the stream
      // (and the idle deadline with it: only the waits for the service count).
      for (;;) {
        const next = await deadline.within(stream.next(), idleTimeoutMs);
        if (next === TIMED_OUT) {
          log.error(
            {
              requestId: ctx.call.headers?.[REQUEST_ID_HEADER],
              generationId: start.generationId,
              provider: start.provider,
              idleTimeoutMs,
            },
            "speech stream cut: the speech service sent nothing within RAILGATE_SPEECH_IDLE_TIMEOUT_MS",
          );
          // Headers are out: ending without the terminating chunk is how the client learns.
          res.destroy();
          return;
        }
        if (next.done) break;
        const msg = next.value;
        if (msg.event.case !== "audio") continue;
        if (!out.write(msg.event.value)) await once(res, "drain", { signal: ctx.signal });
      }
      finished = true;
      // The chunks of this event-loop turn and the chunked terminator: one write.
      res.end();
    } finally {
      out.close();
    }
  } finally {
    deadline.close();
    // Given up (deadline, client gone, a failed write): the service's stream is cancelled, so
    // its abort path settles the generation for what was served.
    if (!finished && !ctx.signal.aborted) ctx.abort(STREAM_ABANDONED);
  }
}

/** Why a speech call was cancelled by the gateway: shared, so no DOMException per request. */
const STREAM_DEADLINE = new Error("speech stream deadline");
const STREAM_ABANDONED = new Error("speech stream abandoned");

/**
 * The most audio one event-loop turn keeps corked before it is written: a 96 kB clip whose
 * chunks arrive in one turn leaves in one or two socket writes. Also what a slow client can
 * leave buffered here beyond the response's high-water mark.
 */
const TURN_MAX_BYTES = 64 * 1024;

/**
 * Writes audio chunks to a response whose socket is corked until the end of the event-loop
 * turn: chunks that arrive in the same turn, and the chunked terminator when the stream ends in
 * it (the last chunk and the end of an upstream's body usually arrive together), leave in one
 * socket write (`res.end()` uncorks the socket fully). Never later than the turn: no chunk waits
 * for the next one. node:http corks each write until the next tick anyway; this only widens the
 * window.
 *
 * While the socket is corked, `res.write()` answers false as soon as the turn's chunks pass the
 * response's high-water mark (16 KiB), though nothing has tried the socket yet. Taking that for
 * backpressure cost a socket write and a wait for "drain" every second chunk (five of each for
 * a 96 kB clip). So a turn's chunks are written corked up to TURN_MAX_BYTES, and the client is
 * behind only when what is still unsent once the socket is uncorked (a turn's end, or the cap)
 * reaches the mark: then write() answers false, and the caller waits for "drain".
 *
 * The socket is corked, not the response: since Node 21 (the image runs Node 22) a corked
 * ServerResponse keeps chunks in a buffer of its own. `end()` then writes the terminator before
 * that buffer (the client reads a body cut short and the rest as garbage), and a `write()` that
 * fills it returns false though nothing reached the socket, so no "drain" ever comes: the
 * stream hung with all its audio sent and no terminator (`test/unit/gateway/speech-stream.test.ts`).
 * A corked socket keeps the order of what is written to it, on every version.
 */
class TurnWriter {
  private scheduled: NodeJS.Immediate | undefined;
  private corkedBytes = 0;
  private readonly flush = () => {
    this.scheduled = undefined;
    this.uncork();
  };

  constructor(private readonly res: ServerResponse) {}

  /** False when the client is behind (wait for "drain": the socket is uncorked already). */
  write(chunk: Uint8Array): boolean {
    const res = this.res;
    if (this.scheduled === undefined) {
      // What an earlier turn left unsent: the client is behind. (This write then answers
      // false itself, so "drain" will come.)
      if (this.behind()) {
        res.write(chunk);
        return false;
      }
      res.socket?.cork();
      this.scheduled = setImmediate(this.flush);
      this.corkedBytes = 0;
    }
    // Its answer is ignored: corked, it speaks of this turn's chunks, not of the client.
    res.write(chunk);
    this.corkedBytes += chunk.byteLength;
    if (this.corkedBytes < TURN_MAX_BYTES) return true;
    this.close();
    return !this.behind();
  }

  /** Uncorks now and forgets the pending flush (the response ended, or must drain). */
  close(): void {
    if (this.scheduled === undefined) return;
    clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.uncork();
  }

  /** Unsent bytes at or past the high-water mark (a write that found them answered false). */
  private behind(): boolean {
    return this.res.writableLength >= this.res.writableHighWaterMark;
  }

  private uncork(): void {
    const res = this.res;
    // After end() (which uncorks the socket fully) the socket may already carry the next response.
    if (res.writableEnded || res.destroyed) return;
    res.socket?.uncork();
  }
}
