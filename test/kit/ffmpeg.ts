import { spawn } from "node:child_process";
import type { AudioFormatName } from "../../domain/audio-formats.js";

/** What ffprobe saw in a stream and what ffmpeg decoded from it. */
export interface Decoded {
  /** ffprobe's codec name: "mp3", "opus", "aac", "flac", "pcm_s16le". */
  codec: string;
  /** ffprobe's container: "mp3", "ogg", "aac", "flac", "wav", "s16le". */
  container: string;
  sampleRate: number;
  channels: number;
  /** Seconds of audio ffmpeg decoded, counted from its samples (not from a header). */
  seconds: number;
}

/** Raw PCM has no header: ffmpeg is told what it is, as a player would be by the content type. */
function inputArgs(format: AudioFormatName): string[] {
  return format === "pcm" ? ["-f", "s16le", "-ar", "24000", "-ac", "1"] : [];
}

function run(command: string, args: string[], input: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (code) => {
      const stderr = Buffer.concat(err).toString().trim();
      // -v error prints only errors: a decode that complained is a failed decode.
      if (code !== 0 || stderr !== "") {
        reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`));
      } else {
        resolve(Buffer.concat(out));
      }
    });
    // A reader that stops early closes its stdin: that shows as its exit status, not here.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/**
 * Probes and fully decodes `bytes` with the system's ffmpeg (a decoder that owes nothing to the
 * encoders under test), failing on any decode error.
 */
export async function decodeWithFfmpeg(
  bytes: Uint8Array,
  format: AudioFormatName,
): Promise<Decoded> {
  const probe = JSON.parse(
    (
      await run(
        "ffprobe",
        [
          "-v",
          "error",
          ...inputArgs(format),
          "-show_entries",
          "stream=codec_name,sample_rate,channels:format=format_name",
          "-of",
          "json",
          "pipe:0",
        ],
        bytes,
      )
    ).toString(),
  ) as {
    streams: { codec_name: string; sample_rate: string; channels: number }[];
    format: { format_name: string };
  };
  const stream = probe.streams[0];
  if (!stream || probe.streams.length !== 1) {
    throw new Error(`expected one audio stream, ffprobe saw ${probe.streams.length}`);
  }
  // Decoded to 24 kHz mono 16-bit, so the byte count gives the duration.
  const pcm = await run(
    "ffmpeg",
    [
      "-v",
      "error",
      // No -xerror: it takes the last, short packet of a WAV whose size says "unknown" (a streamed
      // WAV, OpenAI's too) for a corrupt one. Any real decode error is printed, and fails here.
      ...inputArgs(format),
      "-i",
      "pipe:0",
      "-f",
      "s16le",
      "-ac",
      "1",
      "-ar",
      "24000",
      "pipe:1",
    ],
    bytes,
  );
  return {
    codec: stream.codec_name,
    container: probe.format.format_name,
    sampleRate: Number(stream.sample_rate),
    channels: stream.channels,
    seconds: pcm.byteLength / 2 / 24000,
  };
}

/** What each format must decode as: its codec and container, as ffprobe names them. */
export const FFMPEG_NAMES: Record<AudioFormatName, { codec: string; container: string }> = {
  mp3: { codec: "mp3", container: "mp3" },
  opus: { codec: "opus", container: "ogg" },
  aac: { codec: "aac", container: "aac" },
  flac: { codec: "flac", container: "flac" },
  wav: { codec: "pcm_s16le", container: "wav" },
  pcm: { codec: "pcm_s16le", container: "s16le" },
};
