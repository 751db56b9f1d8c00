import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Generation, GenerationSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import type { Store } from "../common/store/types.js";
import { SPEECH_LIMITS } from "./limits.js";

const KIND = "generation";

/** Generation records live in their workspace, so only that workspace's keys can read them. */
export class GenerationLog {
  constructor(private readonly store: Store) {}

  async put(workspaceId: string, generation: Generation): Promise<void> {
    await this.store.putRecord(
      workspaceId,
      KIND,
      generation.id,
      toBinary(GenerationSchema, generation),
      SPEECH_LIMITS.generationTtlSeconds,
    );
  }

  async get(workspaceId: string, id: string): Promise<Generation | undefined> {
    const data = await this.store.getRecord(workspaceId, KIND, id);
    return data ? fromBinary(GenerationSchema, data) : undefined;
  }
}
