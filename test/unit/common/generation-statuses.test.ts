import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import { GENERATION_STATUSES } from "../../../domain/enums.js";
import { GenerationSchema, GenerationStatus } from "../../../gen/railgate/speech/v1/speech_pb.js";

describe("unit: generation statuses", () => {
  it("are the ones the request log and the API name", () => {
    expect(GENERATION_STATUSES.names).to.deep.equal([
      "completed",
      "failed",
      "cancelled",
      "refused",
      "interrupted",
      "unavailable",
    ]);
    expect(GENERATION_STATUSES.is("refused")).to.equal(true);
    expect(GENERATION_STATUSES.is("REFUSED")).to.equal(false);
    expect(GENERATION_STATUSES.is("")).to.equal(false);
    expect(GENERATION_STATUSES.name(GenerationStatus.FAILED)).to.equal("failed");
    expect(GENERATION_STATUSES.value("cancelled")).to.equal(GenerationStatus.CANCELLED);
    expect(GENERATION_STATUSES.name(GenerationStatus.UNSPECIFIED)).to.equal(undefined);
    expect(GENERATION_STATUSES.name(9 as GenerationStatus)).to.equal(undefined);
  });

  it("travel as the enum in Generation's field 42 (15 held the name and stays reserved)", () => {
    const bytes = toBinary(
      GenerationSchema,
      create(GenerationSchema, { status: GenerationStatus.CANCELLED }),
    );
    // Field 42, wire type 0 (varint): a two-byte tag, then the value.
    expect(Buffer.from(bytes)).to.deep.equal(
      Buffer.from([((42 << 3) & 0x7f) | 0x80, (42 << 3) >> 7, GenerationStatus.CANCELLED]),
    );
    expect(fromBinary(GenerationSchema, bytes).status).to.equal(GenerationStatus.CANCELLED);
  });
});
