import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { TextPart } from "../filters/types.js";

/** The layout's version, so a later one can be told apart. */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER = 1 + IV_BYTES + TAG_BYTES;

/**
 * A request's text as a what-if replay reads it, encrypted with AES-256-GCM under the
 * deployment's RAILGATE_REPLAY_DATA_KEY: [version][iv][tag][ciphertext]. The record's id is the
 * additional authenticated data, so a sealed input copied onto another record does not open.
 */
export function sealInput(key: Buffer, recordId: string, parts: readonly TextPart[]): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(recordId, "utf8"));
  const plain = Buffer.from(JSON.stringify(parts.map((p) => [p.role, p.text])), "utf8");
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]);
}

/**
 * The text sealed by sealInput, or undefined when it does not open: another key (the setting
 * was changed since), another record, or bytes that are not a sealed input.
 */
export function openInput(
  key: Buffer,
  recordId: string,
  sealed: Uint8Array,
): TextPart[] | undefined {
  if (sealed.length < HEADER || sealed[0] !== VERSION) return undefined;
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(recordId, "utf8"));
    decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, HEADER));
    const plain = Buffer.concat([decipher.update(bytes.subarray(HEADER)), decipher.final()]);
    const parsed: unknown = JSON.parse(plain.toString("utf8"));
    if (!Array.isArray(parsed)) return undefined;
    return parsed.map((p: unknown) => {
      const [role, text] = p as [unknown, unknown];
      if (typeof text !== "string" || (role !== "user" && role !== "instructions"))
        throw new Error("not a sealed input");
      return { role, text };
    });
  } catch {
    return undefined;
  }
}
