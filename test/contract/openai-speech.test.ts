import { expect } from "chai";
import OpenAI from "openai";
import { AUDIO_FORMAT_NAMES, audioContentType } from "../../domain/audio-formats.js";
import { useContractSystem } from "../kit/contract-clients.js";
import { decodeWithFfmpeg, FFMPEG_NAMES } from "../kit/ffmpeg.js";
import { MODELS } from "../kit/speech-catalog.js";

const TEXT = "The official OpenAI client, unchanged.";

/** What each format starts with: an MPEG frame sync (or an ID3 tag), a RIFF/WAVE header. */
function expectFormat(format: "mp3" | "pcm" | "wav", bytes: Buffer): void {
  expect(bytes.byteLength).to.be.above(0);
  if (format === "mp3") {
    const sync = bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0;
    expect(sync || bytes.subarray(0, 3).toString("latin1") === "ID3", "an MP3 stream").to.equal(
      true,
    );
  } else if (format === "wav") {
    expect(bytes.subarray(0, 4).toString("latin1")).to.equal("RIFF");
    expect(bytes.subarray(8, 12).toString("latin1")).to.equal("WAVE");
    expect((bytes.byteLength - 44) % 2).to.equal(0);
  } else {
    expect(bytes.byteLength % 2).to.equal(0);
  }
}

const CONTENT_TYPES = {
  mp3: "audio/mpeg",
  pcm: "audio/pcm;rate=24000;channels=1",
  wav: "audio/wav",
};

describe("contract: openai audio.speech.create", () => {
  const h = useContractSystem();

  for (const model of [MODELS.basic, MODELS.espeak]) {
    for (const format of ["mp3", "pcm", "wav"] as const) {
      it(`${model}: response_format ${format}`, async () => {
        const res = await h.openai.audio.speech.create({
          model,
          voice: "alloy",
          input: TEXT,
          response_format: format,
        });
        expect(res.status).to.equal(200);
        expect(res.headers.get("content-type")).to.equal(CONTENT_TYPES[format]);
        expect(res.headers.get("x-generation-id")).to.match(/^gen-/);
        expectFormat(format, Buffer.from(await res.arrayBuffer()));
      });
    }
  }

  // The client's own union of response formats: each is accepted, served as OpenAI serves it, and
  // decodes (the engine offers all six).
  for (const format of AUDIO_FORMAT_NAMES) {
    it(`${MODELS.espeak}: response_format ${format} decodes with ffmpeg`, async () => {
      const res = await h.openai.audio.speech.create({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: format,
      });
      expect(res.headers.get("content-type")).to.equal(audioContentType(format));
      const decoded = await decodeWithFfmpeg(Buffer.from(await res.arrayBuffer()), format);
      expect(decoded.codec).to.equal(FFMPEG_NAMES[format].codec);
      expect(decoded.seconds).to.be.above(0.5);
    });
  }

  it("a format the model does not offer: the client's BadRequestError names those it does", async () => {
    const err = await h.openai.audio.speech
      .create({ model: MODELS.basic, voice: "alloy", input: TEXT, response_format: "opus" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).to.match(
      /"mp3", "wav" or "pcm"/,
    );
  });

  it("the default format is pcm (OpenAI's is mp3: Railgate's default is documented)", async () => {
    const res = await h.openai.audio.speech.create({
      model: MODELS.basic,
      voice: "alloy",
      input: TEXT,
    });
    expect(res.headers.get("content-type")).to.equal(CONTENT_TYPES.pcm);
  });

  it('stream_format "audio": the body streams as it is made, read piece by piece', async () => {
    const res = await h.openai.audio.speech.create({
      model: MODELS.slow,
      voice: "alloy",
      input: TEXT,
      response_format: "pcm",
      stream_format: "audio",
    });
    expect(res.status).to.equal(200);
    const reader = res.body?.getReader();
    if (!reader) throw new Error("no body");
    let pieces = 0;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pieces++;
      bytes += value.byteLength;
    }
    // The slow fake sends its clip in 60 paced chunks: a buffered answer would be one piece.
    expect(pieces).to.be.above(1);
    expect(bytes % 2).to.equal(0);
  });

  it('stream_format "sse" is a 400 naming the field', async () => {
    let caught: unknown;
    try {
      await h.openai.audio.speech.create({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        stream_format: "sse",
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(OpenAI.BadRequestError);
    const err = caught as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err.status).to.equal(400);
    expect(err.message).to.match(/stream_format "sse" is not supported/);
    expect(h.speech.fakes.acme.requests).to.be.empty;
  });

  it("errors are OpenAI's error classes: 401, 404 unknown model, 400 bad format", async () => {
    const stranger = new OpenAI({
      apiKey: "sk-unknown",
      baseURL: `${h.baseUrl}/api/v1`,
      maxRetries: 0,
    });
    const attempts: [() => Promise<unknown>, new (...args: never[]) => Error, number][] = [
      [
        () => stranger.audio.speech.create({ model: MODELS.basic, voice: "alloy", input: TEXT }),
        OpenAI.AuthenticationError,
        401,
      ],
      [
        () => h.openai.audio.speech.create({ model: "acme/none", voice: "alloy", input: TEXT }),
        OpenAI.NotFoundError,
        404,
      ],
      [
        () =>
          h.openai.audio.speech.create({
            model: MODELS.basic,
            voice: "alloy",
            input: TEXT,
            response_format: "opus",
          }),
        OpenAI.BadRequestError,
        400,
      ],
    ];
    for (const [call, type, status] of attempts) {
      let caught: unknown;
      try {
        await call();
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(type);
      expect((caught as InstanceType<typeof OpenAI.APIError>).status).to.equal(status);
    }
  });
});
