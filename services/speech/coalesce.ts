/**
 * Audio pieces for one response stream, merged only when the reader falls
 * behind. A reader that keeps up gets every piece the moment it exists (no
 * timer, no added latency, the first byte untouched); a reader that is busy
 * (a loaded gRPC hop, a slow client) gets, at its next read, everything that
 * arrived meanwhile as one message of at most `maxBytes`. Fewer, larger
 * messages cost less per byte on every hop. Reading ahead stops once
 * `maxBytes` wait, so a slow reader still pushes back on the producer.
 */
export async function* coalesce(
  source: AsyncIterator<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let wakeReader: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  let stopped = false;

  const pump = (async () => {
    try {
      while (!stopped) {
        if (queued >= maxBytes) {
          await new Promise<void>((r) => {
            wakePump = r;
          });
          continue;
        }
        const next = await source.next();
        if (next.done) break;
        queue.push(next.value);
        queued += next.value.byteLength;
        wakeReader?.();
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      wakeReader?.();
    }
  })();

  try {
    for (;;) {
      if (queue.length === 0) {
        if (finished) {
          if (failure) throw failure.error;
          return;
        }
        await new Promise<void>((r) => {
          wakeReader = r;
        });
        wakeReader = undefined;
        continue;
      }
      let out = queue.shift() as Uint8Array;
      // Merge what else is waiting, up to the message cap.
      if (queue.length > 0 && out.byteLength + (queue[0]?.byteLength ?? 0) <= maxBytes) {
        const parts = [out];
        let size = out.byteLength;
        while (queue.length > 0 && size + (queue[0]?.byteLength ?? 0) <= maxBytes) {
          const part = queue.shift() as Uint8Array;
          parts.push(part);
          size += part.byteLength;
        }
        out = Buffer.concat(parts, size);
      }
      queued -= out.byteLength;
      wakePump?.();
      wakePump = undefined;
      yield out;
    }
  } finally {
    stopped = true;
    wakePump?.();
    if (!finished) {
      // The reader stopped early: end the source too (its finally blocks stop the engine or
      // the upstream); a read in flight finishes first.
      await source.return?.(undefined);
    }
    await pump;
  }
}
