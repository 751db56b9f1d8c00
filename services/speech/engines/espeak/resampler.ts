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
    // Medium quality costs about 1% of a core per second of speech; "best" is 4x that for no audible gain.
    converterType: LibSampleRate.ConverterType.SRC_SINC_MEDIUM_QUALITY,
  });
  return (samples) =>
    samples.length === 0
      ? new Int16Array(0)
      : float32ToInt16(converter.simple(int16ToFloat32(samples)));
}
