import { audioContentType } from "../../../domain/audio-formats.js";
import type { AudioEncoder } from "./format.js";

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Raw signed 16-bit little-endian mono, whatever the byte order of the host. */
export class PcmEncoder implements AudioEncoder {
  readonly contentType = audioContentType("pcm");

  encode(samples: Int16Array): Uint8Array {
    if (HOST_IS_LITTLE_ENDIAN) {
      return new Uint8Array(
        samples.buffer.slice(samples.byteOffset, samples.byteOffset + samples.byteLength),
      );
    }
    const out = new Uint8Array(samples.length * 2);
    const view = new DataView(out.buffer);
    for (let i = 0; i < samples.length; i++) {
      view.setInt16(i * 2, samples[i], true);
    }
    return out;
  }

  flush(): Uint8Array {
    return new Uint8Array(0);
  }
}
