import LibSampleRate from "@alexanderolsen/libsamplerate-js";
import { float32ToInt16, int16ToFloat32 } from "../../audio/sample-conversion.js";

export type Resample = (samples: Int16Array) => Int16Array;

/**
 * Resamples whole sentence buffers with libsamplerate's one-shot API. Its streaming API exposes no
 * end-of-input flag, so the filter's tail could never be flushed; sentence buffers start and end
 * in eSpeak's own silence, so resampling them independently leaves no audible seams.
 */
export async function createResampler(fromRate: number, toRate: number): Promise<Resample> {
  const converter = await LibSampleRate.create(1, fromRate, toRate, {
    // Measured (npm run bench): medium quality took 14.7 ms of CPU per audio second, 57-70% of
    // the workers' time, capping the engine below 100 audio s/s on 2 cores; the fastest sinc
    // converter takes 7.2 ms and is transparent for eSpeak's 22 kHz formant voice.
    converterType: LibSampleRate.ConverterType.SRC_SINC_FASTEST,
  });
  return (samples) =>
    samples.length === 0
      ? new Int16Array(0)
      : float32ToInt16(converter.simple(int16ToFloat32(samples)));
}
