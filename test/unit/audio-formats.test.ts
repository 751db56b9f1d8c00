import { expect } from "chai";
import {
  AUDIO_FORMAT_NAMES,
  audioContentType,
  audioFormatName,
  audioFormatValue,
  formatList,
} from "../../domain/audio-formats.js";
import { AudioFormat, AudioFormatSchema } from "../../gen/railgate/speech/v1/speech_pb.js";

describe("unit: the audio format table", () => {
  it("names OpenAI's six formats, in OpenAI's order", () => {
    expect(AUDIO_FORMAT_NAMES).to.deep.equal(["mp3", "opus", "aac", "flac", "wav", "pcm"]);
  });

  it("maps every proto value but UNSPECIFIED to a name and back", () => {
    const values = AudioFormatSchema.values.map((v) => v.number).filter((n) => n !== 0);
    expect(values).to.have.length(AUDIO_FORMAT_NAMES.length);
    for (const value of values) {
      const name = audioFormatName(value);
      expect(name, `AudioFormat ${value}`).to.be.a("string");
      expect(audioFormatValue(name ?? "")).to.equal(value);
    }
    expect(audioFormatName(AudioFormat.UNSPECIFIED)).to.equal(undefined);
    expect(audioFormatValue("ogg")).to.equal(undefined);
    expect(audioFormatValue("MP3")).to.equal(undefined);
  });

  it("serves OpenAI's content types (pcm with its rate and channels: it has no header)", () => {
    expect(AUDIO_FORMAT_NAMES.map(audioContentType)).to.deep.equal([
      "audio/mpeg",
      "audio/opus",
      "audio/aac",
      "audio/flac",
      "audio/wav",
      "audio/pcm;rate=24000;channels=1",
    ]);
  });

  it("lists formats for messages in the table's order", () => {
    expect(formatList()).to.equal('"mp3", "opus", "aac", "flac", "wav" or "pcm"');
    expect(formatList(["pcm", "mp3"])).to.equal('"mp3" or "pcm"');
    expect(formatList(["wav"])).to.equal('"wav"');
  });
});
