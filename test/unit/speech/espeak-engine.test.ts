import { expect } from "chai";
import { SAMPLE_RATE } from "../../../services/speech/audio/index.js";
import {
  defaultPoolSize,
  type EncodedAudio,
  EspeakEngine,
  splitSentences,
  UnknownVoiceError,
} from "../../../services/speech/engines/espeak/index.js";
import { decodeMp3, pcmSamples } from "../../kit/audio.js";

const ENGLISH = "gmw/en-US";
const SCOTTISH = "gmw/en-GB-scotland";

/** PCM chunks as samples, checking that each says how much speech it carries. */
async function collect(chunks: AsyncIterable<EncodedAudio>): Promise<Int16Array[]> {
  const out: Int16Array[] = [];
  for await (const chunk of chunks) {
    expect(chunk.samples).to.equal(chunk.bytes.length / 2);
    out.push(pcmSamples(chunk.bytes));
  }
  return out;
}

async function collectMp3(chunks: AsyncIterable<EncodedAudio>) {
  const parts: Uint8Array[] = [];
  let samples = 0;
  for await (const chunk of chunks) {
    parts.push(chunk.bytes);
    samples += chunk.samples;
  }
  return { bytes: Buffer.concat(parts), samples, chunks: parts.length };
}

function concat(chunks: Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

function peak(samples: Int16Array): number {
  return samples.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
}

/**
 * eSpeak's output varies slightly from run to run (by up to a few hundred samples, whatever the
 * length), so audio is compared by length, within 3% or 25 ms.
 */
function expectSimilarLength(actual: number, expected: number, message: string) {
  const tolerance = Math.max(0.03 * expected, 0.025 * SAMPLE_RATE);
  expect(Math.abs(actual - expected), message).to.be.at.most(tolerance);
}

/** The index of the length closest to `length`. */
function closestIndex(lengths: number[], length: number): number {
  let best = 0;
  for (const [index, candidate] of lengths.entries()) {
    if (Math.abs(candidate - length) < Math.abs(lengths[best] - length)) {
      best = index;
    }
  }
  return best;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

const STORY = [
  "The station was quiet that morning.",
  "A single train waited at the far platform, its engine humming softly.",
  "Nobody seemed to be in a hurry.",
  "Then the clock struck nine!",
  "Doors closed, whistles blew, and the train rolled out into the fog.",
  "Would it ever come back?",
].join(" ");

describe("EspeakEngine", function () {
  this.timeout(60_000);
  let engine: EspeakEngine;

  before(async () => {
    engine = await EspeakEngine.start({ poolSize: 2 });
  });

  after(async () => {
    await engine.close();
  });

  it("lists the voices of the wasm build, including American English", () => {
    const voices = engine.voices();
    expect(voices.length).to.be.greaterThan(100);
    const english = voices.find((voice) => voice.id === ENGLISH);
    expect(english).to.deep.include({ name: "English (America)", languages: ["en-us", "en"] });
    expect(engine.hasVoice(ENGLISH)).to.equal(true);
    expect(engine.hasVoice("en-us")).to.equal(false);
    expect(new Set(voices.map((voice) => voice.id)).size).to.equal(voices.length);
  });

  it("synthesizes a short sentence into audible PCM of plausible length", async () => {
    const audio = concat(
      await collect(engine.synthesize("Hello world.", { voice: ENGLISH, speed: 1 })),
    );
    expect(audio.length / SAMPLE_RATE).to.be.within(0.3, 3);
    expect(peak(audio)).to.be.greaterThan(3000);
  });

  it("synthesizes every voice it lists", async () => {
    const french = engine.voices().find((voice) => voice.languages.includes("fr-fr"));
    expect(french).to.not.equal(undefined);
    const audio = concat(
      await collect(
        engine.synthesize("Bonjour tout le monde.", { voice: french?.id ?? "", speed: 1 }),
      ),
    );
    expect(peak(audio)).to.be.greaterThan(3000);
  });

  it("streams the sentences in order, in blocks, the first within a fraction of a second", async () => {
    const sentences = splitSentences(STORY);
    expect(sentences).to.have.length(6);
    const chunks = await collect(
      engine.synthesize(STORY, { voice: ENGLISH, speed: 1, shortLead: false }),
    );
    // The first block leaves as soon as eSpeak's first tenth of a second is encoded.
    expect(chunks[0].length / SAMPLE_RATE).to.be.below(0.5);
    expect(chunks.length).to.be.greaterThan(sentences.length);
    const alone: number[] = [];
    for (const sentence of sentences) {
      alone.push(
        concat(
          await collect(
            engine.synthesize(sentence, { voice: ENGLISH, speed: 1, shortLead: false }),
          ),
        ).length,
      );
    }
    // A piece's last block ends exactly at its end, so every sentence boundary (spoken alone,
    // summed in order) shows up among the running totals of the blocks: proof of the order.
    const totals: number[] = [];
    for (const chunk of chunks) totals.push((totals.at(-1) ?? 0) + chunk.length);
    let boundary = 0;
    for (const [index, length] of alone.entries()) {
      boundary += length;
      const nearest = totals[closestIndex(totals, boundary)];
      const tolerance = Math.max(0.03 * boundary, 0.025 * SAMPLE_RATE * (index + 1));
      expect(Math.abs(nearest - boundary), `end of sentence ${index}`).to.be.at.most(tolerance);
    }
  });

  it("sends a long sentence in blocks of about a second instead of whole", async () => {
    const sentence = `${"and the train rolled on through the fields ".repeat(8)}until night`;
    const chunks = await collect(
      engine.synthesize(sentence, { voice: ENGLISH, speed: 1, shortLead: false }),
    );
    const seconds = concat(chunks).length / SAMPLE_RATE;
    expect(seconds).to.be.greaterThan(8);
    expect(chunks.length).to.be.at.least(Math.floor(seconds) - 1);
    for (const chunk of chunks) {
      expect(chunk.length / SAMPLE_RATE).to.be.at.most(1.25);
    }
  });

  it("speaks faster at a higher speed", async () => {
    const text = "Speed changes how long this sentence takes to say.";
    const fast = concat(await collect(engine.synthesize(text, { voice: ENGLISH, speed: 2 })));
    const slow = concat(await collect(engine.synthesize(text, { voice: ENGLISH, speed: 0.5 })));
    expect(fast.length).to.be.lessThan(slow.length * 0.6);
  });

  it("rejects an unknown voice with UnknownVoiceError before doing any work", async () => {
    expect(() => engine.synthesize("Hello.", { voice: "xx-nowhere", speed: 1 })).to.throw(
      UnknownVoiceError,
    );
    const error = await rejection(
      (async () => collect(engine.synthesize("Hello.", { voice: "en-us", speed: 1 })))(),
    );
    expect(error).to.be.instanceOf(UnknownVoiceError);
  });

  it("rejects a speed outside 0.25..4", () => {
    for (const speed of [0.2, 4.5, Number.NaN]) {
      expect(() => engine.synthesize("Hello.", { voice: ENGLISH, speed })).to.throw(RangeError);
    }
  });

  it("yields nothing for blank text", async () => {
    expect(await collect(engine.synthesize(" \n ", { voice: ENGLISH, speed: 1 }))).to.deep.equal(
      [],
    );
  });

  it("speaks markup as text instead of obeying it", async () => {
    const audio = concat(
      await collect(
        engine.synthesize("Wait <break time='60s'/> here.", { voice: ENGLISH, speed: 1 }),
      ),
    );
    expect(audio.length / SAMPLE_RATE).to.be.lessThan(15);
  });

  it("ends with an AbortError when aborted mid-stream, then serves the next request", async () => {
    const controller = new AbortController();
    const received: EncodedAudio[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of engine.synthesize(`${STORY} ${STORY}`, {
          voice: ENGLISH,
          speed: 1,
          signal: controller.signal,
        })) {
          received.push(chunk);
          controller.abort();
        }
      })(),
    );
    expect((error as Error).name).to.equal("AbortError");
    expect(received).to.have.length(1);

    const audio = concat(
      await collect(engine.synthesize("Still here.", { voice: ENGLISH, speed: 1 })),
    );
    expect(peak(audio)).to.be.greaterThan(3000);
  });

  it("throws the abort reason straight away for an already-aborted signal", async () => {
    const reason = new DOMException("caller went away", "AbortError");
    const error = await rejection(
      collect(
        engine.synthesize("Hello.", {
          voice: ENGLISH,
          speed: 1,
          signal: AbortSignal.abort(reason),
        }),
      ),
    );
    expect(error).to.equal(reason);
  });

  it("frees the pool when the consumer stops early", async () => {
    for await (const _chunk of engine.synthesize(`${STORY} ${STORY} ${STORY}`, {
      voice: ENGLISH,
      speed: 1,
    })) {
      break;
    }
    const audio = concat(await collect(engine.synthesize("Next.", { voice: ENGLISH, speed: 1 })));
    expect(audio.length).to.be.greaterThan(0);
  });

  it("completes parallel syntheses, each matching the same text spoken alone", async () => {
    const texts = [
      "First request.",
      "Second request, a little longer.",
      STORY,
      "Fourth.",
      "Fifth request here. With two sentences.",
      "Sixth and last.",
    ];
    const parallel = await Promise.all(
      texts.map(async (text) =>
        concat(await collect(engine.synthesize(text, { voice: ENGLISH, speed: 1.25 }))),
      ),
    );
    for (const [index, text] of texts.entries()) {
      const alone = concat(await collect(engine.synthesize(text, { voice: ENGLISH, speed: 1.25 })));
      expect(peak(parallel[index]), text).to.be.greaterThan(3000);
      expectSimilarLength(parallel[index].length, alone.length, text);
    }
  });

  it("encodes mp3 in its workers: one stream that decodes to the speech's length", async () => {
    const pcm = concat(await collect(engine.synthesize(STORY, { voice: ENGLISH, speed: 1 })));
    const mp3 = await collectMp3(
      engine.synthesize(STORY, { voice: ENGLISH, speed: 1, format: "mp3" }),
    );
    expect(mp3.chunks).to.be.greaterThan(6);
    expectSimilarLength(mp3.samples, pcm.length, "samples reported for the mp3 stream");
    const decoded = await decodeMp3(mp3.bytes);
    expect(decoded.errors).to.equal(0);
    expect(decoded.sampleRate).to.equal(SAMPLE_RATE);
    // One encoder for the whole stream: only its start-up delay and final padding are added.
    expect(decoded.seconds - mp3.samples / SAMPLE_RATE).to.be.within(0, 0.1);
    expect(peak(Int16Array.from(decoded.samples, (x) => x * 32767))).to.be.greaterThan(3000);
  });

  it("speaks several turns in different voices as one mp3 stream", async () => {
    const turns = [
      { text: "Good morning. How are you?", voice: ENGLISH },
      { text: "Very well, thank you.", voice: SCOTTISH },
    ];
    const mp3 = await collectMp3(engine.speak(turns, { speed: 1, format: "mp3" }));
    const decoded = await decodeMp3(mp3.bytes);
    expect(decoded.errors).to.equal(0);
    expect(decoded.seconds - mp3.samples / SAMPLE_RATE).to.be.within(0, 0.1);
    let alone = 0;
    for (const turn of turns) {
      alone += concat(await collect(engine.synthesize(turn.text, { ...turn, speed: 1 }))).length;
    }
    expectSimilarLength(mp3.samples, alone, "both turns");
  });

  describe("with one worker serving one mp3 stream at a time", () => {
    let small: EspeakEngine;

    before(async () => {
      small = await EspeakEngine.start({ poolSize: 1, mp3StreamsPerWorker: 1 });
    });

    after(async () => {
      await small.close();
    });

    it("makes a second mp3 stream wait until the first has finished, then serves it", async () => {
      const events: string[] = [];
      const run = async (name: string) => {
        const parts: Uint8Array[] = [];
        for await (const chunk of small.synthesize(STORY, {
          voice: ENGLISH,
          speed: 1,
          format: "mp3",
        })) {
          if (parts.length === 0) events.push(`${name} first`);
          parts.push(chunk.bytes);
        }
        events.push(`${name} end`);
        return decodeMp3(Buffer.concat(parts));
      };
      const [a, b] = await Promise.all([run("a"), run("b")]);
      expect(events).to.deep.equal(["a first", "a end", "b first", "b end"]);
      expect(a.errors).to.equal(0);
      expect(b.errors).to.equal(0);
      expect(b.seconds).to.be.closeTo(a.seconds, 0.1 * a.seconds);
    });

    it("frees the worker and the encoder of a cancelled mp3 stream", async () => {
      const controller = new AbortController();
      const error = await rejection(
        (async () => {
          for await (const _chunk of small.synthesize(`${STORY} ${STORY} ${STORY}`, {
            voice: ENGLISH,
            speed: 1,
            format: "mp3",
            signal: controller.signal,
          })) {
            controller.abort();
          }
        })(),
      );
      expect((error as Error).name).to.equal("AbortError");
      // Would wait forever if the cancelled stream still held the only encoder slot.
      const next = await collectMp3(
        small.synthesize("Next, please.", { voice: ENGLISH, speed: 1, format: "mp3" }),
      );
      expect((await decodeMp3(next.bytes)).errors).to.equal(0);
      expect(next.samples).to.be.greaterThan(0);
    });

    it("gives up waiting for an encoder when the request is cancelled meanwhile", async () => {
      const first = small.synthesize(STORY, { voice: ENGLISH, speed: 1, format: "mp3" });
      const iterator = first[Symbol.asyncIterator]();
      await iterator.next();
      const controller = new AbortController();
      const waiting = rejection(
        collectMp3(
          small.synthesize("Hello.", {
            voice: ENGLISH,
            speed: 1,
            format: "mp3",
            signal: controller.signal,
          }),
        ),
      );
      controller.abort();
      expect(((await waiting) as Error).name).to.equal("AbortError");
      await iterator.return?.();
      const after = await collectMp3(
        small.synthesize("After.", { voice: ENGLISH, speed: 1, format: "mp3" }),
      );
      expect(after.samples).to.be.greaterThan(0);
    });
  });
});

describe("defaultPoolSize", () => {
  const MB = 2 ** 20;

  it("is one worker per core where memory is plentiful", () => {
    expect(defaultPoolSize(2, 24 * 1024 * MB)).to.equal(2);
    expect(defaultPoolSize(16, 64 * 1024 * MB)).to.equal(16);
  });

  it("is fewer workers than cores when a quarter of the memory cannot hold them", () => {
    // A quarter of 512 MB is 128 MB: two workers with their mp3 encoders, not eight.
    expect(defaultPoolSize(8, 512 * MB)).to.equal(2);
    expect(defaultPoolSize(8, 64 * MB)).to.equal(1);
  });
});
