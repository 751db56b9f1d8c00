import { open, rm } from "node:fs/promises";
import { extname } from "node:path";
import { type Command, jsonBody, str } from "../../command.js";
import { record } from "../../output.js";
import { apiCommand, f, fieldValue } from "../api-command.js";

const FLAGS = [
  f("voice", "string"),
  f("response_format", "string", {
    flag: "format",
    help: "mp3, opus, aac, flac, wav or pcm (default: --out's extension, else the server's)",
  }),
  f("speed", "number"),
  f("instructions", "string", { help: "how to speak (models that take instructions)" }),
  f("session_id", "string", { flag: "session", help: "groups requests in the request log" }),
  f("user", "string", { help: "your end user's id, for the request log" }),
];

/**
 * speak: POST /api/v1/audio/speech with a standard key. The audio goes to --out as it
 * arrives; a stream that fails (a refusal before it, or a cut during it) leaves no file.
 */
const spec = apiCommand({
  words: "speak",
  summary:
    "synthesize TEXT into the file --out, in the format its extension names (a standard key)",
  method: "POST",
  path: "/api/v1/audio/speech",
  body: [f("model", "string"), ...FLAGS],
  rawBody: true,
});

/** The formats a file's extension names; --format wins over it. */
const FORMAT_OF_EXTENSION: Record<string, string> = {
  ".mp3": "mp3",
  ".opus": "opus",
  ".ogg": "opus",
  ".aac": "aac",
  ".flac": "flac",
  ".wav": "wav",
  ".pcm": "pcm",
};

/** The format a file's name says (x.mp3: mp3), if any. */
export function formatOfFile(path: string): string | undefined {
  return FORMAT_OF_EXTENSION[extname(path).toLowerCase()];
}

export const speakApiCommand: Command = {
  ...spec,
  examples: [
    'railgate speak "Hello there" --model openai/gpt-4o-mini-tts --voice alloy --out hello.mp3',
    'railgate speak "Raw samples" --model railgate/espeak-ng --voice en --out hi.raw --format pcm',
  ],
  args: ["TEXT"],
  options: { ...spec.options, out: { type: "string" } },
  optionHelp: { ...spec.optionHelp, out: "the audio file to write" },
  // TEXT is the body's input.
  api: spec.api && { ...spec.api, body: [...spec.api.body, "input"] },
  required: ["model", "voice", "out"],
  async run({ api, values, args }) {
    const out = str(values, "out") ?? "";
    // --body/--file: the API's other fields (input_references, provider, ...); flags on top.
    const given = values.body !== undefined || values.file !== undefined ? jsonBody(values) : {};
    const body: Record<string, unknown> = { ...given, model: str(values, "model"), input: args[0] };
    // A file named x.mp3 holds MP3 unless the body or --format says otherwise.
    const fromExtension = formatOfFile(out);
    if (fromExtension && body.response_format === undefined) body.response_format = fromExtension;
    for (const field of FLAGS) {
      const v = str(values, field.flag);
      if (v !== undefined) body[field.name] = fieldValue(field, v);
    }
    const res = await api.send({ method: "POST", path: "/api/v1/audio/speech", body });
    const file = await open(out, "w");
    let bytes = 0;
    try {
      if (res.body) {
        for await (const chunk of res.body) {
          await file.write(chunk);
          bytes += chunk.length;
        }
      }
    } catch (err) {
      await file.close();
      await rm(out, { force: true });
      throw new Error(`the audio stream broke off after ${bytes} bytes: ${(err as Error).message}`);
    }
    await file.close();
    const data = {
      generation_id: res.headers.get("x-generation-id"),
      model: res.headers.get("x-railgate-model"),
      provider: res.headers.get("x-railgate-provider"),
      content_type: res.headers.get("content-type"),
      bytes,
      out,
    };
    return record(data, { data });
  },
};
