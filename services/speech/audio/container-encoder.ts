import { encoderStarts } from "../../../domain/metrics.js";
import { ContainerPipe } from "./container-pipe.js";
import type { ContainerFormat } from "./format.js";

/**
 * Formats whose encoder starts a worker thread and a WebAssembly instance per stream (about
 * 30 ms for the thread and 25 ms for the instance on a 2-core machine): a stream of these takes
 * a pipe primed ahead of it. Opus encodes in this thread and starts in a few milliseconds.
 */
const PRIMED: ReadonlySet<ContainerFormat> = new Set(["aac", "flac"]);

/**
 * One primed pipe per format, made after that format's first stream (a process that never
 * encodes AAC never starts its worker) and again each time a stream takes it.
 */
const spares = new Map<ContainerFormat, ContainerPipe>();
/** Pipes being primed, by format: at most one each. */
const priming = new Map<ContainerFormat, ContainerPipe>();

function refill(format: ContainerFormat): void {
  if (spares.has(format) || priming.has(format)) return;
  const pipe = new ContainerPipe(format);
  priming.set(format, pipe);
  pipe.prime().then(
    () => {
      // Not wanted any more when closeSpareEncoders ran meanwhile (it cancelled the pipe).
      if (priming.get(format) !== pipe) return;
      priming.delete(format);
      spares.set(format, pipe);
    },
    () => {
      // A pipe that failed to start is dropped; the next stream starts its own, as before,
      // and reports the failure itself.
      if (priming.get(format) === pipe) priming.delete(format);
      void pipe.cancel();
    },
  );
}

function pipeFor(format: ContainerFormat): ContainerPipe {
  if (!PRIMED.has(format)) return new ContainerPipe(format);
  const spare = spares.get(format);
  spares.delete(format);
  encoderStarts.labels(format, spare ? "true" : "false").inc();
  refill(format);
  return spare ?? new ContainerPipe(format);
}

/** Frees the primed pipes and those being primed (their worker threads): the speech server's close. */
export async function closeSpareEncoders(): Promise<void> {
  const pipes = [...spares.values(), ...priming.values()];
  spares.clear();
  priming.clear();
  await Promise.all(pipes.map((pipe) => pipe.cancel()));
}

/**
 * Encodes a stream of 16-bit mono PCM at SAMPLE_RATE into `format` (Ogg Opus, ADTS AAC or FLAC)
 * as it arrives, yielding the container's bytes as the muxer writes them. Every container here
 * is written front to back, so the bytes stream out without waiting for the end. The PCM is
 * pulled only once the bytes of the last piece were taken: a slow listener slows the engine.
 */
export async function* encodeContainer(
  format: ContainerFormat,
  pcm: AsyncIterable<Int16Array>,
): AsyncGenerator<Uint8Array> {
  const pipe = pipeFor(format);
  const { queue } = pipe;
  let drained: (() => void) | undefined;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;

  const pump = async () => {
    await pipe.start();
    for await (const samples of pcm) {
      if (stopped) return;
      if (samples.length === 0) continue;
      await pipe.addAudio(samples);
      if (queue.length > 0 && !stopped) {
        await new Promise<void>((resolve) => {
          drained = resolve;
        });
      }
    }
    if (stopped) return;
    await pipe.finish();
  };
  pump().then(
    () => {
      finished = true;
      pipe.notify();
    },
    (error: unknown) => {
      failure = { error };
      pipe.notify();
    },
  );

  try {
    for (;;) {
      const bytes = queue.shift();
      if (bytes) {
        yield bytes;
        continue;
      }
      if (failure) throw failure.error;
      if (finished) return;
      const release = drained;
      drained = undefined;
      release?.();
      await pipe.nextEvent();
    }
  } finally {
    if (!finished && !failure) {
      stopped = true;
      drained?.();
      // Frees the encoder (and its worker thread) of a stream the listener left.
      await pipe.cancel();
    }
  }
}
