import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Model, ModelSchema } from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { ModelCatalog } from "./model-catalog.js";

/**
 * The catalog as the ListModels response carries it. The catalog's load time stands in for the
 * publication date of a model whose entry gives none, so `created` is stable while it runs.
 */
export function catalogToProto(catalog: ModelCatalog): Model[] {
  return catalog.models().map((m) =>
    create(ModelSchema, {
      id: m.id,
      aliases: m.aliases,
      name: m.name,
      description: m.description,
      createdAt: timestampFromDate(m.created ? new Date(m.created) : catalog.loadedAt),
      voices: catalog.voices(m).map((v) => ({ id: v.id, name: v.name, languages: v.languages })),
      endpoints: m.endpoints.map((e) => ({
        provider: e.provider,
        kind: e.adapter === "espeak" ? "engine" : "upstream",
        adapter: e.adapter,
        pricePerMillionChars: e.price_per_million_chars,
        capabilities: {
          speed: e.capabilities.speed,
          multiSpeaker: e.capabilities.multi_speaker,
          instructions: e.capabilities.instructions,
          voiceCloning: e.capabilities.voice_cloning,
          maxReferences: e.capabilities.max_references,
          imageReference: e.capabilities.image_reference,
        },
        dataPolicy: {
          zeroDataRetention: e.data_policy.zero_data_retention,
          safetyRetention: e.data_policy.safety_retention,
          trainsOnData: e.data_policy.trains_on_data,
          publishesPrompts: e.data_policy.publishes_prompts,
        },
        byok: e.byok,
      })),
    }),
  );
}
