import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { audioFormatName, formatList } from "../../domain/audio-formats.js";
import type { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import type { CatalogModel } from "../../domain/catalog/types.js";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { AudioFormat, DataCollection } from "../../gen/railgate/speech/v1/speech_pb.js";
import type { SynthesizeRequest } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument, notFound, withReason } from "../../platform/rpc/errors.js";
import { checkJsonLimits, checkJsonMembers } from "../../platform/rpc/json-checks.js";
import type { ResponseFormat } from "./audio/index.js";
import type { SynthesisSegment } from "./engines/types.js";
import { parseReferences, type References } from "./references.js";
import { type RoutingPreferences, routingPreferences } from "./routing/preferences.js";

/** A speech request after every rule of the spec has been checked. */
export interface SpeechPlan {
  model: CatalogModel;
  segments: SynthesisSegment[];
  multiSpeaker: boolean;
  characters: number;
  speed: number;
  format: ResponseFormat;
  /** The same format as the catalog's endpoints list theirs (the proto enum). */
  formatValue: AudioFormat;
  references: References;
  instructions?: string;
  zdr: boolean;
  dataCollection: "allow" | "deny";
  providerOptions: Record<string, JsonObject>;
  /** provider.order, only, ignore, allow_fallbacks, sort, max_price. */
  routing: RoutingPreferences;
  sessionId: string;
  user: string;
  trace?: JsonObject;
  voice: string;
}

const TRACE_STRING_KEYS = [
  "trace_id",
  "trace_name",
  "span_name",
  "generation_name",
  "parent_span_id",
];

function throwInvalid(message: string): never {
  throw invalidArgument(message);
}

function length(s: string): number {
  return [...s].length;
}

function checkInstructions(field: string, value: string | undefined): void {
  if (value !== undefined && length(value) > SPEECH_LIMITS.maxInstructionsChars) {
    throw invalidArgument(
      `${field} must be at most ${SPEECH_LIMITS.maxInstructionsChars} characters`,
    );
  }
}

function checkVoice(
  catalog: ModelCatalog,
  model: CatalogModel,
  field: string,
  voice: string,
): void {
  if (voice.length === 0) throw invalidArgument(`${field} must be at least 1 character`);
  if (length(voice) > SPEECH_LIMITS.maxVoiceChars) {
    throw invalidArgument(`${field} must be at most ${SPEECH_LIMITS.maxVoiceChars} characters`);
  }
  if (!catalog.hasVoice(model, voice)) {
    throw invalidArgument(
      `${field} ${quote(voice)} is not a voice of model ${model.id} (see GET /api/v1/models?output_modalities=speech)`,
    );
  }
}

/** Validates a request against the spec and the model's capabilities; throws with the field named. */
export function planSpeech(req: SynthesizeRequest, catalog: ModelCatalog): SpeechPlan {
  if (!req.model) throw invalidArgument("model is required");
  const model = catalog.find(req.model);
  if (!model) throw notFound(ErrorReason.MODEL_NOT_FOUND, `Model ${quote(req.model)} not found`);
  const endpoints = model.endpoints;

  checkInstructions("instructions", req.instructions);
  let segments: SynthesisSegment[];
  const input = req.input;
  if (input.case === "text") {
    if (input.value.trim().length === 0) throw invalidArgument("input must not be empty");
    const voice = req.voice ?? "";
    checkVoice(catalog, model, "voice", voice);
    segments = [{ text: input.value, voice, instructions: req.instructions }];
  } else if (input.case === "turns") {
    const turns = input.value.turns;
    if (!endpoints.some((e) => e.capabilities.multiSpeaker)) {
      throw invalidArgument(
        `input as an array of turns needs a multi-speaker model; ${model.id} is not one`,
      );
    }
    if (turns.length === 0) throw invalidArgument("input must have at least 1 turn");
    // Turns may each name their voice, so the top-level one may be left out; given, it is
    // held to the same rules (at least 1 character, a voice of the model), even if every
    // turn overrides it: the voice field has presence for exactly this distinction.
    if (req.voice !== undefined) checkVoice(catalog, model, "voice", req.voice);
    if (turns.length > SPEECH_LIMITS.maxTurns)
      throw invalidArgument(`input may have at most ${SPEECH_LIMITS.maxTurns} turns`);
    segments = turns.map((t, i) => {
      if (t.text.trim().length === 0)
        throw invalidArgument(`input[${i}].text is required and must not be empty`);
      const voice = t.voice || req.voice;
      if (!voice)
        throw invalidArgument(`input[${i}].voice is required when no top-level voice is given`);
      checkVoice(catalog, model, t.voice ? `input[${i}].voice` : "voice", voice);
      checkInstructions(`input[${i}].instructions`, t.instructions);
      return { text: t.text, voice, instructions: t.instructions ?? req.instructions };
    });
  } else {
    throw invalidArgument("input is required: a string, or an array of turns");
  }
  const characters = segments.reduce((n, s) => n + length(s.text), 0);
  if (characters > SPEECH_LIMITS.maxInputChars) {
    throw withReason(
      Code.InvalidArgument,
      ErrorReason.PAYLOAD_TOO_LARGE,
      `input is too long: ${characters} characters, at most ${SPEECH_LIMITS.maxInputChars}`,
    );
  }

  const speed = req.speed ?? 1;
  if (!Number.isFinite(speed) || speed < SPEECH_LIMITS.minSpeed || speed > SPEECH_LIMITS.maxSpeed) {
    throw invalidArgument(
      `speed must be from ${SPEECH_LIMITS.minSpeed} to ${SPEECH_LIMITS.maxSpeed}`,
    );
  }
  if (speed !== 1 && !endpoints.some((e) => e.capabilities.speed)) {
    throw invalidArgument(`speed must be 1 for model ${model.id}: it has no speed control`);
  }

  // Unspecified is Railgate's documented default, pcm (OpenAI's is mp3).
  const format: ResponseFormat =
    req.responseFormat === AudioFormat.UNSPECIFIED
      ? "pcm"
      : (audioFormatName(req.responseFormat) ??
        throwInvalid(`response_format must be ${formatList()}`));
  const formatValue =
    req.responseFormat === AudioFormat.UNSPECIFIED ? AudioFormat.PCM : req.responseFormat;
  if (!endpoints.some((e) => e.formats.includes(formatValue))) {
    // formatList puts them in the table's order, each once.
    const offered = endpoints.flatMap((e) => e.formats.flatMap((v) => audioFormatName(v) ?? []));
    throw invalidArgument(
      `response_format ${quote(format)} is not offered by model ${model.id}: it offers ${formatList(offered)}`,
    );
  }

  if (length(req.sessionId) > SPEECH_LIMITS.maxSessionIdChars) {
    throw invalidArgument(
      `session_id must be at most ${SPEECH_LIMITS.maxSessionIdChars} characters`,
    );
  }
  if (length(req.user) > SPEECH_LIMITS.maxUserChars) {
    throw invalidArgument(`user must be at most ${SPEECH_LIMITS.maxUserChars} characters`);
  }
  const trace = req.trace as JsonObject | undefined;
  // The gateway checks the same limits; a direct gRPC caller is held to them too.
  if (trace) checkJsonLimits("trace", trace, SPEECH_LIMITS.trace, invalidArgument);
  for (const k of TRACE_STRING_KEYS) {
    if (trace && trace[k] !== undefined && typeof trace[k] !== "string") {
      throw invalidArgument(`trace.${k} must be a string`);
    }
  }

  const prefs = req.provider;
  if (prefs && DataCollection[prefs.dataCollection] === undefined) {
    throw invalidArgument('provider.data_collection must be "allow" or "deny"');
  }
  if (prefs) {
    checkJsonMembers(
      "provider.options",
      prefs.options,
      SPEECH_LIMITS.providerOptions,
      invalidArgument,
    );
  }
  return {
    model,
    segments,
    multiSpeaker: input.case === "turns",
    characters,
    speed,
    format,
    formatValue,
    references: parseReferences(req.inputReferences),
    instructions: req.instructions,
    zdr: prefs?.zdr === true,
    dataCollection: prefs?.dataCollection === DataCollection.DENY ? "deny" : "allow",
    providerOptions: (prefs?.options ?? {}) as Record<string, JsonObject>,
    routing: routingPreferences(prefs),
    sessionId: req.sessionId,
    user: req.user,
    trace,
    voice: segments[0]?.voice ?? req.voice,
  };
}
