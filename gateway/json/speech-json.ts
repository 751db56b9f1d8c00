import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  AUDIO_FORMAT_NAMES,
  type AudioFormatName,
  audioFormatValue,
  formatList,
} from "../../domain/audio-formats.js";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import {
  DataCollection,
  ProviderPreferencesSchema,
  ReferencePartSchema,
  TurnsSchema,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  type SynthesizeRequest,
  SynthesizeRequestSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { quote } from "../../platform/quote.js";
import { checkJsonLimits, checkJsonMembers, fieldPath } from "../../platform/rpc/json-checks.js";
import { type JsonSchema, specSchema } from "../openapi/spec-schema.js";
import { badRequest, checkElements, checkFields, type Spec } from "./fields.js";
import {
  PROVIDER_ROUTING_SCHEMAS,
  PROVIDER_ROUTING_SPEC,
  providerRoutingFromJson,
} from "./provider-routing-json.js";

const DATA_COLLECTION = ["allow", "deny"];

const L = SPEECH_LIMITS;
const VOICE = { minLength: 1, maxLength: L.maxVoiceChars };
const INSTRUCTIONS = { maxLength: L.maxInstructionsChars };

const SPEECH_SPEC: Spec = {
  // Its rules are in SPEECH_BODY_SCHEMA (text or turns).
  input: { type: "string" },
  model: { type: "string" },
  voice: { type: "string", rules: VOICE },
  response_format: { type: "string", rules: { enum: [...AUDIO_FORMAT_NAMES] } },
  // "sse" is refused by name (see checkStreamFormat).
  stream_format: { type: "string", nullable: true, rules: { enum: ["audio"] } },
  speed: { type: "number", nullable: true, rules: { minimum: L.minSpeed, maximum: L.maxSpeed } },
  input_references: { type: "array", nullable: true },
  instructions: { type: "string", nullable: true, rules: INSTRUCTIONS },
  provider: { type: "object", nullable: true },
  session_id: { type: "string", nullable: true, rules: { maxLength: L.maxSessionIdChars } },
  trace: { type: "object", nullable: true },
  user: { type: "string", nullable: true, rules: { maxLength: L.maxUserChars } },
};

const TURN_SPEC: Spec = {
  text: { type: "string" },
  voice: { type: "string", nullable: true, rules: { maxLength: L.maxVoiceChars } },
  instructions: { type: "string", nullable: true, rules: INSTRUCTIONS },
};

const PROVIDER_SPEC: Spec = {
  zdr: { type: "boolean", nullable: true },
  data_collection: { type: "string", nullable: true, rules: { enum: DATA_COLLECTION } },
  options: { type: "object", nullable: true },
  ...PROVIDER_ROUTING_SPEC,
};

type Json = Record<string, unknown>;

/**
 * OpenAI's `stream_format`: "audio" (the default) is what every response is, raw audio
 * streamed as it is made. "sse" (audio in server-sent events) is not served; a client that
 * asks for it would otherwise get raw bytes it cannot parse, so it is refused by name.
 */
function checkStreamFormat(value: unknown): void {
  if (value === undefined || value === null || value === "audio") return;
  if (value === "sse") {
    throw badRequest(
      'stream_format "sse" is not supported: audio is streamed as raw bytes; send "audio" or omit it',
    );
  }
  throw badRequest(`stream_format must be "audio", got ${quote(value)}`);
}

const REFERENCE_TYPES = ["input_audio", "text", "image_url"];

function referencePart(raw: Json, i: number) {
  const at = `input_references[${i}]`;
  const type = raw.type;
  if (type === "input_audio") {
    checkFields(raw, { type: { type: "string" }, input_audio: { type: "object" } }, `${at}.`);
    const audio = raw.input_audio as Json | undefined;
    if (!audio) throw badRequest(`${at}.input_audio is required for type "input_audio"`);
    checkFields(
      audio,
      { data: { type: "string" }, format: { type: "string" } },
      `${at}.input_audio.`,
    );
    if (typeof audio.data !== "string") throw badRequest(`${at}.input_audio.data is required`);
    return create(ReferencePartSchema, {
      part: { case: "inputAudio", value: { data: audio.data } },
    });
  }
  if (type === "text") {
    checkFields(raw, { type: { type: "string" }, text: { type: "string" } }, `${at}.`);
    if (typeof raw.text !== "string") throw badRequest(`${at}.text is required for type "text"`);
    return create(ReferencePartSchema, { part: { case: "text", value: raw.text } });
  }
  if (type === "image_url") {
    checkFields(raw, { type: { type: "string" }, image_url: { type: "object" } }, `${at}.`);
    const image = raw.image_url as Json | undefined;
    if (!image) throw badRequest(`${at}.image_url is required for type "image_url"`);
    checkFields(image, { url: { type: "string" }, detail: { type: "string" } }, `${at}.image_url.`);
    if (typeof image.url !== "string") throw badRequest(`${at}.image_url.url is required`);
    return create(ReferencePartSchema, { part: { case: "imageUrl", value: { url: image.url } } });
  }
  const names = REFERENCE_TYPES.map((t) => `"${t}"`);
  throw badRequest(`${at}.type must be ${names.slice(0, -1).join(", ")} or ${names.at(-1)}`);
}

/**
 * The speech body (OpenAI's shape plus the spec's fields) -> SynthesizeRequest.
 * Types and unknown fields are checked here; the rules themselves are the
 * service's, so gRPC callers get exactly the same checks.
 */
export function speechRequestFromJson(
  body: Json,
  sessionHeader: string | undefined,
  /** response_format when the body names none (RAILGATE_SPEECH_DEFAULT_FORMAT); unset: the service's, pcm. */
  defaultFormat?: AudioFormatName,
): SynthesizeRequest {
  const input = body.input;
  if (Array.isArray(input)) {
    checkFields({ ...body, input: "" }, SPEECH_SPEC);
  } else {
    checkFields(body, SPEECH_SPEC);
  }
  // Free-form JSON is bounded before anything is built from it: a deep or huge
  // trace would otherwise fail protobuf encoding (500) or exceed the internal
  // message limit, and it is stored with the generation record.
  if (body.trace) checkJsonLimits("trace", body.trace, SPEECH_LIMITS.trace, badRequest);
  if (body.model === undefined) throw badRequest("model is required");
  if (input === undefined || input === null)
    throw badRequest("input is required: a string, or an array of turns");
  const req = create(SynthesizeRequestSchema, {
    model: body.model as string,
    // Omitted stays unset: an empty string is a voice given empty, which the service refuses.
    voice: body.voice as string | undefined,
    instructions: (body.instructions as string | null | undefined) ?? undefined,
    speed: (body.speed as number | null | undefined) ?? undefined,
    // The body wins over the header, as the spec says (an empty body value is no value).
    sessionId: (body.session_id as string | null | undefined) || sessionHeader || "",
    user: (body.user as string | null | undefined) ?? "",
    trace: (body.trace as JsonObject | null | undefined) ?? undefined,
  });
  if (Array.isArray(input)) {
    checkElements("input", input, "object");
    req.input = {
      case: "turns",
      value: create(TurnsSchema, {
        turns: (input as Json[]).map((t, i) => {
          checkFields(t, TURN_SPEC, `input[${i}].`);
          if (typeof t.text !== "string") throw badRequest(`input[${i}].text is required`);
          return {
            text: t.text,
            voice: (t.voice as string | null | undefined) ?? "",
            instructions: (t.instructions as string | null | undefined) ?? undefined,
          };
        }),
      }),
    };
  } else {
    req.input = { case: "text", value: input as string };
  }
  const format = body.response_format ?? defaultFormat;
  if (format !== undefined) {
    const value = audioFormatValue(format as string);
    if (value === undefined) {
      throw badRequest(`response_format must be ${formatList()}, got ${quote(format)}`);
    }
    req.responseFormat = value;
  }
  checkStreamFormat(body.stream_format);
  const refs = body.input_references as unknown[] | null | undefined;
  if (refs) {
    checkElements("input_references", refs, "object");
    req.inputReferences = (refs as Json[]).map(referencePart);
  }
  const provider = body.provider as Json | null | undefined;
  if (provider) {
    // sort may also be OpenRouter's { by, partition }: providerRoutingFromJson checks that form.
    const sortObject = provider.sort !== null && typeof provider.sort === "object";
    checkFields(sortObject ? { ...provider, sort: null } : provider, PROVIDER_SPEC, "provider.");
    const dc = provider.data_collection;
    if (dc !== undefined && dc !== null && !DATA_COLLECTION.includes(dc as string)) {
      throw badRequest(`provider.data_collection must be "allow" or "deny"`);
    }
    const options = (provider.options as Json | null | undefined) ?? {};
    checkJsonMembers("provider.options", options, SPEECH_LIMITS.providerOptions, badRequest);
    for (const [slug, value] of Object.entries(options)) {
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw badRequest(
          `${fieldPath("provider.options", slug)} must be an object of options for provider ${quote(slug)}`,
        );
      }
    }
    req.provider = create(ProviderPreferencesSchema, {
      zdr: (provider.zdr as boolean | null | undefined) ?? undefined,
      dataCollection:
        dc === "deny"
          ? DataCollection.DENY
          : dc === "allow"
            ? DataCollection.ALLOW
            : DataCollection.UNSPECIFIED,
      options: options as Record<string, JsonObject>,
      ...providerRoutingFromJson(provider),
    });
  }
  return req;
}

/**
 * The speech body's OpenAPI schema, from the tables speechRequestFromJson checks: `input` is
 * text or a list of turns; `provider` its own table. Reference audio entries are checked per
 * type deeper down and stay plain objects here.
 */
export const SPEECH_BODY_SCHEMA: JsonSchema = speechBodySchema("pcm");

/** The speech body's schema, response_format's default the deployment's (RAILGATE_SPEECH_DEFAULT_FORMAT). */
export function speechBodySchema(defaultFormat: AudioFormatName): JsonSchema {
  return specSchema(SPEECH_SPEC, {
    // As OpenAI's: a voice is required. Turns (input as a list) may each name theirs instead.
    required: ["model", "input", "voice"],
    refine: {
      voice: {
        type: "string",
        description:
          "A voice of the model (GET /api/v1/models lists them). With turns, a turn's own voice wins; a request whose turns all name one may leave this out.",
      },
      response_format: {
        type: "string",
        default: defaultFormat,
        description: `The audio format. Omitted: ${defaultFormat}, this deployment's default (RAILGATE_SPEECH_DEFAULT_FORMAT; pcm, 16-bit mono at 24 kHz as OpenRouter's, unless the operator chose another)`,
      },
      input: {
        description: `At most ${L.maxInputChars} characters of text across input and turns: 413 beyond`,
        oneOf: [
          { type: "string", maxLength: L.maxInputChars },
          {
            type: "array",
            minItems: 1,
            maxItems: L.maxTurns,
            items: specSchema(TURN_SPEC, { required: ["text"] }),
          },
        ],
      },
      input_references: {
        type: "array",
        items: {
          type: "object",
          required: ["type"],
          properties: { type: { enum: REFERENCE_TYPES } },
        },
        description: `At most ${L.maxReferenceClips} audio clips, ${L.maxReferenceBytes} bytes decoded in all`,
      },
      provider: specSchema(PROVIDER_SPEC, { refine: PROVIDER_ROUTING_SCHEMAS }),
    },
  });
}
