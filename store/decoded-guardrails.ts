import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { deepFreeze } from "../platform/deep-freeze.js";
import { decodeFields } from "./guardrail-fields.js";

/** Bounds the memo (a guardrail and its bytes: about 2 KB an entry). */
const MAX_DECODED = 4096;

/**
 * The guardrails last decoded from Redis, by hash key, with the bytes they came from. Decoding
 * one (protobuf-es fromBinary walks the descriptor) cost ~7 µs, more than any other step of a
 * management read; comparing the bytes read with the bytes decoded last time is a memcmp, and
 * an unchanged guardrail is then the very message decoded before. Every read still goes to
 * Redis: only the decoding is saved, never a change missed. The message is shared, so it is
 * frozen: a caller that needs a changed guardrail changes a clone (a write to it throws).
 */
export class DecodedGuardrails {
  private readonly entries = new Map<
    string,
    { bytes: Buffer; version: number; value: Guardrail }
  >();

  /** The guardrail whose stored field encodings are `parts`. */
  decode(key: string, parts: Buffer[], version: number): Guardrail {
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    const known = this.entries.get(key);
    if (known && known.version === version && known.bytes.equals(bytes)) return known.value;
    const value = deepFreeze(decodeFields([bytes], version));
    if (this.entries.size >= MAX_DECODED) this.entries.clear();
    // A copy: the reply's buffers may be views of the client's read buffer.
    this.entries.set(key, { bytes: Buffer.from(bytes), version, value });
    return value;
  }
}
