import { expect } from "chai";
import { SAMPLE_RATE } from "../../../services/speech/audio/index.js";
import {
  EspeakEngine,
  splitSentences,
  UnknownVoiceError,
} from "../../../services/speech/engines/espeak/index.js";

const ENGLISH = "gmw/en-US";

async function collect(chunks: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const out: Int16Array[] = [];
  for await (const chunk of chunks) {
    out.push(chunk);
  }
  return out;
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

  it("streams one chunk per sentence, in order, the first before the stream ends", async () => {
    const sentences = splitSentences(STORY);
    expect(sentences).to.have.length(6);
    const events: string[] = [];
    const chunks: Int16Array[] = [];
    for await (const chunk of engine.synthesize(STORY, { voice: ENGLISH, speed: 1 })) {
      events.push(`chunk ${chunks.length}`);
      chunks.push(chunk);
    }
    events.push("end");
    expect(events).to.deep.equal([
      "chunk 0",
      "chunk 1",
      "chunk 2",
      "chunk 3",
      "chunk 4",
      "chunk 5",
      "end",
    ]);
    const alone: number[] = [];
    for (const sentence of sentences) {
      alone.push(
        // Whole, as the stream speaks every sentence after the first.
        concat(
          await collect(
            engine.synthesize(sentence, { voice: ENGLISH, speed: 1, shortLead: false }),
          ),
        ).length,
      );
    }
    // Each chunk is its own sentence: closest in length to that sentence spoken alone.
    for (const [index, chunk] of chunks.entries()) {
      expect(closestIndex(alone, chunk.length), `chunk ${index}`).to.equal(index);
      expectSimilarLength(chunk.length, alone[index], `chunk ${index}`);
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
    const received: Int16Array[] = [];
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
});
