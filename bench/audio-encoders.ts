/**
 * The engine's encoders alone, in this process: for each format it encodes, 10 s of speech-like
 * PCM fed in 0.5 s pieces (as the engine hands it over): the first byte after the encoder is
 * asked, the wall time, and the process CPU (every thread: AAC and FLAC encode in a worker thread
 * each), the median of 5 runs after one unmeasured; then the RSS that 10 concurrent streams add.
 *
 *   node dist/bench/audio-encoders.js
 */

import { SAMPLE_RATE } from "../services/speech/audio/format.js";
import { createAudioEncoder, encodeContainer } from "../services/speech/audio/index.js";

const RUNS = 6;
const CONCURRENT = 10;

function tone(seconds: number, hz: number): Int16Array {
  const out = new Int16Array(seconds * SAMPLE_RATE);
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.round(9000 * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  }
  return out;
}

const PIECES = Array.from({ length: 20 }, (_, i) => tone(0.5, 200 + 10 * i));

async function* pieces(pauseMs = 0): AsyncGenerator<Int16Array> {
  for (const piece of PIECES) {
    yield piece;
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

type Format = "mp3" | "opus" | "aac" | "flac";

/** Milliseconds to the first byte, or NaN when none came. */
async function encodeOnce(format: Format, pauseMs = 0): Promise<number> {
  const started = performance.now();
  let first = Number.NaN;
  if (format === "mp3") {
    const encoder = await createAudioEncoder("mp3");
    for await (const piece of pieces(pauseMs)) {
      if (encoder.encode(piece).byteLength > 0 && Number.isNaN(first)) {
        first = performance.now() - started;
      }
    }
    encoder.flush();
    return first;
  }
  for await (const bytes of encodeContainer(format, pieces(pauseMs))) {
    if (bytes.byteLength > 0 && Number.isNaN(first)) first = performance.now() - started;
  }
  return first;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const FORMATS: Format[] = ["mp3", "opus", "aac", "flac"];
console.log(
  "format | first byte ms | wall ms | process CPU ms per 10 s of audio | RSS per concurrent stream MB",
);
for (const format of FORMATS) {
  await encodeOnce(format);
  const firsts: number[] = [];
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let run = 1; run < RUNS; run++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    firsts.push(await encodeOnce(format));
    walls.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
  }
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  // Paced like speech being made, so every stream is open at once.
  await Promise.all(Array.from({ length: CONCURRENT }, () => encodeOnce(format, 50)));
  clearInterval(sampler);
  console.log(
    [
      format,
      median(firsts).toFixed(1),
      median(walls).toFixed(0),
      median(cpus).toFixed(0),
      ((peak - before) / 1e6 / CONCURRENT).toFixed(1),
    ].join(" | "),
  );
}
process.exit(0);
