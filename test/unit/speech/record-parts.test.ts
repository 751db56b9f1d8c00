import { create, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  GenerationSchema,
  GenerationStatus,
  RoutingOutcome,
  RoutingStepSchema,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import {
  encodeDraft,
  encodeEnding,
  endingOf,
  type RecordDraft,
  recordFromOutbox,
  recordOf,
  wholeRecord,
} from "../../../services/speech/recovery/record-parts.js";
import { joinedRecord, NOTHING_CHECKPOINTED } from "../../../store/reservations.js";

const draft: RecordDraft = {
  id: "gen-0123456789abcdef",
  createdAtMs: 1_790_000_000_123,
  model: "openai/tts-1",
  characters: 42,
  format: 1,
  sessionId: "s1",
  user: "u1",
  trace: { trace_id: "t-1", nested: { n: 1 } },
  filterOutcomes: [{ slug: "email", label: "Email", action: 2, count: 3, guardrailId: "g1" }],
  guardrailId: "g1",
  keyHash: "a".repeat(64),
  workspaceId: "ws1",
  voice: "alloy",
  speed: 1.25,
  dataRegion: 2,
  governedBy: ["key:g1", "workspace_default:g2"],
};

describe("unit: a record in the outbox, as a draft and an ending", () => {
  it("joins a draft and an ending into the record the service would have written", () => {
    const finished = recordOf(draft, {});
    finished.status = GenerationStatus.COMPLETED;
    finished.provider = "openai";
    finished.costUsd = 0.00063;
    finished.bytes = 96_000n;
    finished.durationSeconds = 2;
    finished.timeToFirstByteMs = 12.5;
    finished.routing = [
      create(RoutingStepSchema, {
        provider: "openai",
        outcome: RoutingOutcome.SERVED,
        attempts: 1,
        status: 200,
      }),
    ];
    const entry = joinedRecord(encodeDraft(draft), encodeEnding(endingOf(finished)));
    const back = recordFromOutbox(entry);
    expect(toBinary(GenerationSchema, back)).to.deep.equal(toBinary(GenerationSchema, finished));
    expect(back.createdAt?.seconds).to.equal(1_790_000_000n);
    expect(back.filterOutcomes[0]?.count).to.equal(3);
  });

  it("reads a request recovered with nothing checkpointed as interrupted and free", () => {
    const back = recordFromOutbox(joinedRecord(encodeDraft(draft), NOTHING_CHECKPOINTED));
    expect(back.status).to.equal(GenerationStatus.INTERRUPTED);
    expect(back.costUsd).to.equal(0);
    expect(back.id).to.equal(draft.id);
  });

  it("reads a whole record as it was, and refuses an entry in no known form", () => {
    const refusal = recordOf(draft, { status: GenerationStatus.FAILED });
    refusal.refusalReason = "no endpoint";
    expect(recordFromOutbox(wholeRecord(refusal)).refusalReason).to.equal("no endpoint");
    expect(() => recordFromOutbox(new TextEncoder().encode("Xjunk"))).to.throw(/no known form/);
  });
});
