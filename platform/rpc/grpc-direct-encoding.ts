import { type DescMessage, ScalarType } from "@bufbuild/protobuf";

/** An encoded gRPC message whose bytes field is written as it is, behind its prefix. */
export interface DirectBytes {
  /** The 5-byte gRPC frame header, the field's tag and its length. */
  prefix: Buffer;
  bytes: Uint8Array;
}

function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    len++;
  }
  return len;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/**
 * For a message type whose every field belongs to one oneof (the speech
 * stream's `SynthesizeResponse`: a start event or audio), an encoder of the
 * messages that carry one of its `bytes` fields: a gRPC frame is then a small
 * prefix (frame header, tag, length) followed by the bytes exactly as the
 * service produced them, written with no copy. Protobuf's writer would copy
 * the audio into its buffer and again when it finishes, and the envelope a
 * third time. Any other message (the start event, unknown fields kept, a
 * type of another shape) gets `undefined` and is encoded by protobuf as usual.
 */
export function directBytesEncoder(
  desc: DescMessage,
): (message: unknown) => DirectBytes | undefined {
  const oneof = desc.oneofs.length === 1 ? desc.oneofs[0] : undefined;
  if (!oneof || desc.fields.some((f) => f.oneof !== oneof)) return () => undefined;
  const tags = new Map<string, number>();
  for (const f of oneof.fields) {
    // LEN wire type (2): bytes are length-delimited.
    if (f.fieldKind === "scalar" && f.scalar === ScalarType.BYTES) {
      tags.set(f.localName, (f.number << 3) | 2);
    }
  }
  if (tags.size === 0) return () => undefined;
  const key = oneof.localName;
  return (message) => {
    const m = message as Record<string, unknown> & { $unknown?: unknown[] };
    const selected = m[key] as { case?: string; value?: unknown } | undefined;
    if (selected?.case === undefined) return undefined;
    const tag = tags.get(selected.case);
    const bytes = selected.value;
    if (tag === undefined || !(bytes instanceof Uint8Array)) return undefined;
    if (m.$unknown !== undefined && m.$unknown.length > 0) return undefined;
    const n = bytes.byteLength;
    const tagLen = varintLength(tag);
    const payload = tagLen + varintLength(n) + n;
    const prefix = Buffer.allocUnsafe(5 + payload - n);
    prefix[0] = 0;
    prefix.writeUInt32BE(payload, 1);
    writeVarint(prefix, writeVarint(prefix, 5, tag), n);
    return { prefix, bytes };
  };
}
