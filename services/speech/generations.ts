import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Generation, GenerationSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import { SPEECH_LIMITS } from "../../platform/limits.js";
import type { Store, StoredRecord } from "../../store/types.js";

const KIND = "generation";

/** Generation records live in their workspace, so only that workspace's keys can read them. */
export class GenerationLog {
  constructor(private readonly store: Store) {}

  /** The record as the store keeps it (written with the settlement, in one round trip). */
  stored(generation: Generation): StoredRecord {
    return {
      kind: KIND,
      id: generation.id,
      data: toBinary(GenerationSchema, generation),
      ttlSeconds: SPEECH_LIMITS.generationTtlSeconds,
    };
  }

  async get(workspaceId: string, id: string): Promise<Generation | undefined> {
    const data = await this.store.getRecord(workspaceId, KIND, id);
    return data ? fromBinary(GenerationSchema, data) : undefined;
  }
}
