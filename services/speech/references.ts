import { Code } from "@connectrpc/connect";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import type { ReferencePart } from "../../gen/railgate/speech/v1/speech_pb.js";
import { invalidArgument, withReason } from "../../platform/rpc/errors.js";
import type { ReferenceInput } from "./engines/types.js";

const DATA_URL = /^data:([a-z]+)\/([a-z0-9.+-]+)(?:;[a-z0-9=.+-]+)*;base64,([A-Za-z0-9+/=\s]*)$/i;

/** Decodes a base64 data URL of the given top-level media type; the message names the field. */
function decodeDataUrl(value: string, media: "audio" | "image", field: string): number {
  const m = DATA_URL.exec(value);
  if (!m || m[1]?.toLowerCase() !== media) {
    throw invalidArgument(
      `${field} must be a base64 data URL of ${media} (data:${media}/<type>;base64,...)`,
    );
  }
  const b64 = (m[3] ?? "").replace(/\s+/g, "");
  if (b64.length === 0 || b64.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
    throw invalidArgument(`${field} does not hold valid base64 data`);
  }
  return Buffer.from(b64, "base64").byteLength;
}

export interface References {
  mode: "none" | "audio" | "image";
  clips: number;
  parts: ReferenceInput[];
}

/**
 * Checks reference content: audio mode is 1..3 clips, each optionally with a
 * transcript (a single clip's transcript may come before or after it; with
 * several clips each transcript immediately follows its clip); image mode is
 * exactly one image; the modes never mix. An empty list is no reference.
 */
export function parseReferences(parts: ReferencePart[]): References {
  if (parts.length === 0) return { mode: "none", clips: 0, parts: [] };
  const kinds = parts.map((p, i) => {
    const c = p.part.case;
    if (c === undefined)
      throw invalidArgument(`input_references[${i}] must have type input_audio, text or image_url`);
    return c;
  });
  const clips = kinds.filter((k) => k === "inputAudio").length;
  const images = kinds.filter((k) => k === "imageUrl").length;
  const texts = kinds.filter((k) => k === "text").length;
  if (clips > 0 && images > 0) {
    throw invalidArgument(
      "input_references cannot mix audio clips (input_audio) with an image (image_url)",
    );
  }
  const out: ReferenceInput[] = [];
  let bytes = 0;
  if (images > 0) {
    if (images !== 1 || texts > 0) {
      throw invalidArgument("input_references in image mode must be exactly one image_url part");
    }
    const part = parts[0]?.part;
    const url = part?.case === "imageUrl" ? (part.value.url ?? "") : "";
    if (url.startsWith("data:"))
      bytes += decodeDataUrl(url, "image", "input_references[0].image_url.url");
    else if (!/^https:\/\/[^\s]+$/.test(url)) {
      throw invalidArgument("input_references[0].image_url.url must be a data URL or an https URL");
    }
    out.push({ kind: "image", value: url });
    return { mode: "image", clips: 0, parts: out };
  }
  if (clips === 0)
    throw invalidArgument("input_references needs at least one input_audio clip for a transcript");
  if (clips > SPEECH_LIMITS.maxReferenceClips) {
    throw invalidArgument(
      `input_references may hold at most ${SPEECH_LIMITS.maxReferenceClips} audio clips`,
    );
  }
  if (texts > clips)
    throw invalidArgument("input_references has more transcripts than audio clips");
  if (clips > 1) {
    kinds.forEach((k, i) => {
      if (k === "text" && kinds[i - 1] !== "inputAudio") {
        throw invalidArgument(
          `input_references[${i}]: with several clips each transcript must immediately follow its input_audio clip`,
        );
      }
    });
  }
  parts.forEach((p, i) => {
    if (p.part.case === "inputAudio") {
      bytes += decodeDataUrl(p.part.value.data, "audio", `input_references[${i}].input_audio.data`);
      out.push({ kind: "audio", value: p.part.value.data });
    } else if (p.part.case === "text") {
      if (p.part.value.trim().length === 0)
        throw invalidArgument(`input_references[${i}].text must not be empty`);
      out.push({ kind: "text", value: p.part.value });
    }
  });
  if (bytes > SPEECH_LIMITS.maxReferenceBytes) {
    // Too large, not malformed: 413 like an input over its limit (the spec's "payload too large").
    throw withReason(
      Code.InvalidArgument,
      ErrorReason.PAYLOAD_TOO_LARGE,
      `input_references decode to ${bytes} bytes, at most ${SPEECH_LIMITS.maxReferenceBytes} (15 MiB)`,
    );
  }
  return { mode: "audio", clips, parts: out };
}
