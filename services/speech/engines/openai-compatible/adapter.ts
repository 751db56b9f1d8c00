import { ConnectError } from "@connectrpc/connect";
import type { ProviderConfig } from "../../catalog/types.js";
import type { AdapterOutput, AdapterRequest, SpeechAdapter, SynthesisSegment } from "../types.js";
import { upstreamHttpError, upstreamTimeout, upstreamUnreachable } from "./upstream-errors.js";

/**
 * Idle time-out on the provider: armed only while we wait for it (the
 * response head, each read), so long clips stream as long as bytes keep
 * coming and a slow consumer on our side is never blamed on the provider.
 */
class Deadline {
  private timer?: NodeJS.Timeout;
  readonly controller = new AbortController();
  timedOut = false;

  constructor(
    private readonly ms: number,
    outer: AbortSignal,
  ) {
    if (outer.aborted) this.controller.abort(outer.reason);
    outer.addEventListener("abort", () => this.controller.abort(outer.reason), { once: true });
    this.arm();
  }

  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error("timeout"));
    }, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Any upstream that speaks OpenAI's POST /v1/audio/speech: OpenAI itself and
 * the many servers that copy its protocol. The requested format is passed
 * through (OpenAI's pcm is ours: 16-bit LE mono 24 kHz), so bytes are relayed
 * as they arrive without re-encoding. Turns become one request per turn.
 */
export class OpenAiCompatibleAdapter implements SpeechAdapter {
  constructor(
    private readonly providerId: string,
    private readonly config: ProviderConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  private body(request: AdapterRequest, segment: SynthesisSegment): Record<string, unknown> {
    const { endpoint } = request;
    const body: Record<string, unknown> = {
      // Passthrough options first: they may add fields but never override the request's own.
      ...request.options,
      model: endpoint.upstream_model ?? request.model.id.slice(request.model.id.indexOf("/") + 1),
      input: segment.text,
      voice: segment.voice,
      response_format: request.format,
    };
    if (endpoint.capabilities.speed && request.speed !== 1) body.speed = request.speed;
    if (endpoint.capabilities.instructions && segment.instructions)
      body.instructions = segment.instructions;
    if (request.references.length > 0) {
      body.input_references = request.references.map((r) =>
        r.kind === "audio"
          ? { type: "input_audio", input_audio: { data: r.value } }
          : r.kind === "image"
            ? { type: "image_url", image_url: { url: r.value } }
            : { type: "text", text: r.value },
      );
    }
    return body;
  }

  /** Sends one segment's request; resolves with the response once its status is known good. */
  private async send(request: AdapterRequest, segment: SynthesisSegment, deadline: Deadline) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const key = this.config.api_key_env ? this.env[this.config.api_key_env] : undefined;
    if (key) headers.authorization = `Bearer ${key}`;
    let res: Response;
    try {
      res = await fetch(`${this.config.base_url}/audio/speech`, {
        method: "POST",
        headers,
        body: JSON.stringify(this.body(request, segment)),
        signal: deadline.controller.signal,
      });
    } catch (err) {
      throw this.failure(err, deadline, request.signal);
    }
    if (!res.ok || !res.body) {
      const detail = await res.text().catch(() => "");
      throw upstreamHttpError(this.providerId, res.status, errorMessageOf(detail));
    }
    return res.body;
  }

  private failure(err: unknown, deadline: Deadline, outer: AbortSignal): unknown {
    if (err instanceof ConnectError) return err;
    if (outer.aborted) return outer.reason;
    if (deadline.timedOut) return upstreamTimeout(this.providerId, this.config.timeout_ms);
    const cause =
      err instanceof Error
        ? ((err.cause as Error | undefined)?.message ?? err.message)
        : String(err);
    return upstreamUnreachable(this.providerId, cause);
  }

  async start(request: AdapterRequest): Promise<AdapterOutput> {
    const deadline = new Deadline(this.config.timeout_ms, request.signal);
    const [first, ...rest] = request.segments;
    if (!first) throw new Error("no input segments");
    let body: ReadableStream<Uint8Array>;
    try {
      body = await this.send(request, first, deadline);
    } finally {
      // The clock only runs while we wait on the provider, never while our consumer is busy.
      deadline.clear();
    }
    const self = this;
    async function* bytes(): AsyncGenerator<Uint8Array> {
      try {
        for (let i = 0; ; i++) {
          const reader = body.getReader();
          try {
            for (;;) {
              deadline.arm();
              const { done, value } = await reader.read();
              deadline.clear();
              if (done) break;
              if (value.byteLength > 0) yield value;
            }
          } finally {
            reader.releaseLock();
            await body.cancel().catch(() => {});
          }
          const next = rest[i];
          if (!next) return;
          deadline.arm();
          body = await self.send(request, next, deadline);
          deadline.clear();
        }
      } catch (err) {
        throw self.failure(err, deadline, request.signal);
      } finally {
        deadline.clear();
      }
    }
    return { kind: "encoded", bytes: bytes() };
  }
}

/** OpenAI-style `{ error: { message } }`, or the raw text. */
function errorMessageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof parsed.error === "string") return parsed.error;
    if (typeof parsed.error?.message === "string") return parsed.error.message;
  } catch {
    // not JSON
  }
  return text.trim();
}
