import { once } from "node:events";
import { AudioFormat, type Generation } from "../../gen/railgate/speech/v1/speech_pb.js";
import { pickRateLimitHeaders } from "../../platform/rate-limit-headers.js";
import type { Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { readJsonObject, sendJson } from "../http-io.js";
import { checkQuery } from "../json/fields.js";
import { isoOrNull } from "../json/proto-json.js";
import { SPEECH_BODY_SCHEMA, speechRequestFromJson } from "../json/speech-json.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  dataOf,
  INTEGER,
  NULL,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";

const FORMAT_NAMES: Partial<Record<AudioFormat, string>> = {
  [AudioFormat.PCM]: "pcm",
  [AudioFormat.MP3]: "mp3",
  [AudioFormat.WAV]: "wav",
};

/**
 * A generation record: Railgate's fields, and OpenRouter's generation shape beside them (the
 * fields @openrouter/sdk validates). Speech has no tokens, finish reasons of a model, app
 * attribution or web search: those are null; `usage`/`total_cost` are what it cost.
 */
function generationToJson(g: Generation) {
  const createdAt = isoOrNull(g.createdAt);
  return {
    id: g.id,
    model: g.model,
    provider: g.provider,
    status: g.status,
    characters: g.characters,
    cost_usd: g.costUsd,
    response_format: FORMAT_NAMES[g.format] ?? "pcm",
    voice: g.voice,
    speed: g.speed,
    duration_seconds: g.durationSeconds,
    bytes: Number(g.bytes),
    time_to_first_byte_ms: g.timeToFirstByteMs,
    session_id: g.sessionId || null,
    user: g.user || null,
    trace: g.trace ?? null,
    guardrail_outcomes: g.filterOutcomes.map((f) => ({
      slug: f.slug,
      label: f.label,
      action: f.action,
      count: f.count,
    })),
    created_at: createdAt,
    // Records written before data_region existed have none.
    data_region: g.dataRegion || null,
    // OpenRouter's names for the same facts.
    api_type: "tts",
    provider_name: g.provider,
    total_cost: g.costUsd,
    usage: g.costUsd,
    is_byok: g.byok,
    cancelled: g.status === "cancelled",
    finish_reason: g.status,
    native_finish_reason: g.status,
    latency: g.timeToFirstByteMs,
    streamed: true,
    external_user: g.user || null,
    workspace_id: g.workspaceId || null,
    origin: "",
    // What speech has no counterpart of.
    app_id: null,
    cache_discount: null,
    generation_time: null,
    http_referer: null,
    moderation_latency: null,
    native_tokens_cached: null,
    native_tokens_completion: null,
    native_tokens_completion_images: null,
    native_tokens_prompt: null,
    native_tokens_reasoning: null,
    num_fetches: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_media_prompt: null,
    num_search_results: null,
    preset_id: null,
    provider_responses: null,
    router: null,
    service_tier: null,
    tokens_completion: null,
    tokens_prompt: null,
    upstream_id: null,
    upstream_inference_cost: null,
    user_agent: null,
    web_search_engine: null,
  };
}

type GenerationJson = ReturnType<typeof generationToJson>;
type Item<L> = L extends readonly (infer T)[] ? T : never;
const NULLABLE_STRING = orNull(STRING);

/** What generationToJson renders; shapeOf makes a field added there without its schema a compile error. */
const GENERATION_SCHEMA = shapeOf<GenerationJson>({
  id: STRING,
  model: STRING,
  provider: STRING,
  status: STRING,
  characters: INTEGER,
  cost_usd: NUMBER,
  response_format: { enum: Object.values(FORMAT_NAMES) },
  voice: STRING,
  speed: NUMBER,
  duration_seconds: NUMBER,
  bytes: INTEGER,
  time_to_first_byte_ms: NUMBER,
  session_id: NULLABLE_STRING,
  user: NULLABLE_STRING,
  trace: { type: ["object", "null"] },
  guardrail_outcomes: arrayOf(
    shapeOf<Item<GenerationJson["guardrail_outcomes"]>>({
      slug: STRING,
      label: STRING,
      action: STRING,
      count: INTEGER,
    }),
  ),
  created_at: orNull(DATE_TIME),
  data_region: NULLABLE_STRING,
  api_type: { const: "tts" },
  provider_name: STRING,
  total_cost: NUMBER,
  usage: NUMBER,
  is_byok: BOOLEAN,
  cancelled: BOOLEAN,
  finish_reason: STRING,
  native_finish_reason: STRING,
  latency: NUMBER,
  streamed: { const: true },
  external_user: NULLABLE_STRING,
  workspace_id: NULLABLE_STRING,
  origin: STRING,
  app_id: NULL,
  cache_discount: NULL,
  generation_time: NULL,
  http_referer: NULL,
  moderation_latency: NULL,
  native_tokens_cached: NULL,
  native_tokens_completion: NULL,
  native_tokens_completion_images: NULL,
  native_tokens_prompt: NULL,
  native_tokens_reasoning: NULL,
  num_fetches: NULL,
  num_input_audio_prompt: NULL,
  num_media_completion: NULL,
  num_media_prompt: NULL,
  num_search_results: NULL,
  preset_id: NULL,
  provider_responses: NULL,
  router: NULL,
  service_tier: NULL,
  tokens_completion: NULL,
  tokens_prompt: NULL,
  upstream_id: NULL,
  upstream_inference_cost: NULL,
  user_agent: NULL,
  web_search_engine: NULL,
});

const GENERATION_QUERY = ["id"] as const;

export const speechRoutes: Route[] = [
  {
    pattern: "/api/v1/audio/speech",
    access: "standard",
    docs: {
      POST: {
        summary: "Speak text: the audio streams back as it is made",
        body: SPEECH_BODY_SCHEMA,
        status: 200,
        produces: "audio",
        description:
          "Audio in response_format, streamed; RateLimit-* headers when the key is rate limited",
      },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxSpeechBodyBytes);
        const header = ctx.req.headers["x-session-id"];
        const req = speechRequestFromJson(body, Array.isArray(header) ? header[0] : header);
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
        const first = await stream.next();
        if (first.done || first.value.event.case !== "start") {
          throw new HttpError(502, "Speech service ended the stream before any audio");
        }
        const start = first.value.event.value;
        ctx.res.writeHead(200, {
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
        // Each chunk goes out as it arrives; backpressure from a slow client pauses the stream.
        for await (const msg of { [Symbol.asyncIterator]: () => stream }) {
          if (msg.event.case !== "audio") continue;
          if (!ctx.res.write(msg.event.value)) await once(ctx.res, "drain", { signal: ctx.signal });
        }
        ctx.res.end();
      },
    },
  },
  {
    pattern: "/api/v1/generation",
    access: "standard",
    docs: {
      GET: {
        summary: "A generation's record (cost, timing, guardrail outcomes)",
        query: GENERATION_QUERY,
        status: 200,
        response: dataOf(GENERATION_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        checkQuery(ctx.url.searchParams, GENERATION_QUERY);
        const id = ctx.url.searchParams.get("id");
        if (!id)
          throw new HttpError(400, "id is required (GET /api/v1/generation?id=<generation id>)");
        const res = await ctx.clients.speech.getGeneration({ id }, ctx.call);
        sendJson(ctx.res, 200, { data: res.generation && generationToJson(res.generation) });
      },
    },
  },
];
