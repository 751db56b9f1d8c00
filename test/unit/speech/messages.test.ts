import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import { AudioFormat } from "../../../gen/railgate/speech/v1/speech_pb.js";
import { SynthesizeResponseSchema } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { audioMessage, startMessage } from "../../../services/speech/messages.js";

/**
 * The Synthesize stream's messages are built as literals (services/speech/messages.ts): they
 * must stay exactly what create() builds, and encode the same on the wire.
 */
describe("speech: stream messages as literals", () => {
  it("an audio message is create()'s, and encodes the same", () => {
    const audio = new Uint8Array([1, 2, 3, 250]);
    const literal = audioMessage(audio);
    const created = create(SynthesizeResponseSchema, { event: { case: "audio", value: audio } });
    expect(literal).to.deep.equal(created);
    expect(literal.event.value).to.equal(audio, "relayed by reference, not copied");
    expect(toBinary(SynthesizeResponseSchema, literal)).to.deep.equal(
      toBinary(SynthesizeResponseSchema, created),
    );
  });

  it("a start message is create()'s, field for field, and round-trips", () => {
    const start = {
      format: AudioFormat.MP3,
      contentType: "audio/mpeg",
      sampleRate: 24000,
      channels: 1,
      generationId: "gen-1",
      model: "acme/voice",
      provider: "acme",
    };
    const literal = startMessage(start);
    const created = create(SynthesizeResponseSchema, { event: { case: "start", value: start } });
    expect(literal).to.deep.equal(created);
    const bytes = toBinary(SynthesizeResponseSchema, literal);
    expect(fromBinary(SynthesizeResponseSchema, bytes)).to.deep.equal(created);
  });
});
