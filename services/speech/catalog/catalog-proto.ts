import { create } from "@bufbuild/protobuf";
import { type Model, ModelSchema } from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { ModelCatalog } from "./model-catalog.js";

/** The catalog as the ListModels response carries it. */
export function catalogToProto(catalog: ModelCatalog): Model[] {
  return catalog.models().map((m) =>
    create(ModelSchema, {
      id: m.id,
      name: m.name,
      description: m.description,
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
