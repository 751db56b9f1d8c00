import { ConnectError } from "@connectrpc/connect";
import type { Dispatcher } from "undici";
import type { ProviderConfig } from "../../../../domain/catalog/types.js";
import {
  annotateActiveSpan,
  injectTraceHeaders,
  inSpan,
  SpanKind,
} from "../../../../platform/observability/tracing.js";
import type { AdapterOutput, AdapterRequest, SpeechAdapter, SynthesisSegment } from "../types.js";
import { upstreamHttpError, upstreamTimeout, upstreamUnreachable } from "./upstream-errors.js";
import { type UpstreamPool, upstreamPool } from "./upstream-pool.js";

type ResponseBody = Dispatcher.ResponseData["body"];

/** undici's time-out errors: connecting, waiting for the head, a pause between body bytes. */
const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** Enough of a provider's error body for its message; the rest is not read. */
const MAX_ERROR_BODY_BYTES = 4_096;

/**
 * Any upstream that speaks OpenAI's POST /v1/audio/speech: OpenAI itself and
 * the many servers that copy its protocol. The requested format is passed
 * through (OpenAI's pcm is ours: 16-bit LE mono 24 kHz), so bytes are relayed
 * as they arrive without re-encoding. Turns become one request per turn.
 */
export class OpenAiCompatibleAdapter implements SpeechAdapter {
  private readonly upstream: UpstreamPool;

  constructor(
    private readonly providerId: string,
    private readonly config: ProviderConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.upstream = upstreamPool(config);
  }

  private body(request: AdapterRequest, segment: SynthesisSegment): Record<string, unknown> {
    const { endpoint } = request;
    const body: Record<string, unknown> = {
      // Passthrough options first: they may add fields but never override the request's own.
      ...request.options,
      // An unset upstream model is "" in the catalog: the model id without its vendor prefix.
      model: endpoint.upstreamModel || request.model.id.slice(request.model.id.indexOf("/") + 1),
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

  /** Sends one segment's request; resolves with the body once the status is known good. */
  private async send(request: AdapterRequest, segment: SynthesisSegment): Promise<ResponseBody> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const key = this.config.api_key_env ? this.env[this.config.api_key_env] : undefined;
    if (key) headers.authorization = `Bearer ${key}`;
    const body = this.body(request, segment);
    // A client span up to the response head (the audio streams on under the service's span);
    // its traceparent goes upstream, so a provider that traces joins the caller's trace.
    return inSpan(
      `text_to_speech ${String(body.model)}`,
      {
        "gen_ai.operation.name": "text_to_speech",
        "gen_ai.provider.name": this.providerId,
        "gen_ai.request.model": String(body.model),
        "server.address": this.upstream.host,
        "server.port": this.upstream.port,
        "http.request.method": "POST",
      },
      async () => {
        injectTraceHeaders(headers);
        const res = await this.request(request, headers, body);
        annotateActiveSpan({ "http.response.status_code": res.statusCode });
        if (res.statusCode < 200 || res.statusCode >= 300) {
          const detail = await readDetail(res.body);
          throw upstreamHttpError(this.providerId, res.statusCode, errorMessageOf(detail));
        }
        return res.body;
      },
      SpanKind.CLIENT,
    );
  }

  private async request(
    request: AdapterRequest,
    headers: Record<string, string>,
    body: Record<string, unknown>,
  ): Promise<Dispatcher.ResponseData> {
    try {
      // The caller's signal goes straight to undici: a client that goes away
      // aborts the request and closes its connection (mid-body it cannot be reused).
      return await this.upstream.pool.request({
        method: "POST",
        path: this.upstream.speechPath,
        headers,
        body: JSON.stringify(body),
        signal: request.signal,
      });
    } catch (err) {
      throw this.failure(err, request.signal);
    }
  }

  private failure(err: unknown, outer: AbortSignal): unknown {
    if (err instanceof ConnectError) return err;
    if (outer.aborted) return outer.reason;
    const code = (err as { code?: unknown } | undefined)?.code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code))
      return upstreamTimeout(this.providerId, this.config.timeout_ms, err);
    return upstreamUnreachable(this.providerId, err);
  }

  async start(request: AdapterRequest): Promise<AdapterOutput> {
    const [first, ...rest] = request.segments;
    if (!first) throw new Error("no input segments");
    let body = await this.send(request, first);
    const self = this;
    async function* bytes(): AsyncGenerator<Uint8Array> {
      try {
        for (let i = 0; ; i++) {
          // Leaving the loop early (the consumer stopped) destroys the body, which
          // aborts the provider's response instead of draining it.
          for await (const chunk of body as AsyncIterable<Buffer>) {
            if (chunk.byteLength > 0) yield chunk;
          }
          const next = rest[i];
          if (!next) return;
          body = await self.send(request, next);
        }
      } catch (err) {
        throw self.failure(err, request.signal);
      } finally {
        if (!body.destroyed) body.destroy();
      }
    }
    // undici's body is a Readable: chunks that arrive while the service is busy are read as one.
    return { kind: "encoded", bytes: bytes(), merged: true };
  }

  /** Closes the provider's connections (shutdown: in-flight requests are cut); idempotent. */
  async close(): Promise<void> {
    if (!this.upstream.pool.destroyed) await this.upstream.pool.destroy();
  }
}

/** The first few KiB of an error response, as text; a failed read is an empty detail. */
async function readDetail(body: ResponseBody): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      parts.push(chunk);
      size += chunk.byteLength;
      if (size >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // the provider hung up mid-error: what arrived is the detail
  }
  return Buffer.concat(parts).subarray(0, MAX_ERROR_BODY_BYTES).toString("utf8");
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
