import { open, rm } from "node:fs/promises";
import { explainToJson } from "../../../gateway/json/explain-json.js";
import { generationToJson } from "../../../gateway/json/generation-json.js";
import { speechRequestFromJson } from "../../../gateway/json/speech-json.js";
import type { SynthesisStart } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { type Command, num, str } from "../command.js";
import { formatOfFile } from "../http/resources/speech.js";
import { type Row, record } from "../output.js";

export const speechCommands: Command[] = [
  {
    words: "explain",
    args: ["KEY_HASH"],
    options: {
      model: { type: "string" },
      region: { type: "string" },
      "generation-id": { type: "string" },
    },
    summary: "why a key's requests are allowed or refused (management key)",
    async run({ clients, values, args }) {
      const res = await clients.speech.explain({
        keyHash: args[0],
        model: str(values, "model") ?? "",
        region: str(values, "region") ?? "",
        generationId: str(values, "generation-id") ?? "",
      });
      // The HTTP API's JSON: enums by their API names, the effective policy as the API shows it.
      const data = explainToJson(res) as Row;
      return record(data, { data });
    },
  },
  {
    words: "generations get",
    args: ["ID"],
    summary: "a generation record (a standard key of its workspace)",
    async run({ clients, args }) {
      const res = await clients.speech.getGeneration({ id: args[0] });
      // The HTTP API's record: statuses, outcomes and formats by their API names.
      const data = res.generation ? (generationToJson(res.generation) as Row) : {};
      return record(data, { data });
    },
  },
  {
    words: "speak",
    args: ["TEXT"],
    options: {
      model: { type: "string" },
      voice: { type: "string" },
      format: { type: "string" },
      speed: { type: "string" },
      out: { type: "string" },
    },
    required: ["model", "voice", "out"],
    summary:
      "synthesize TEXT into the file --out, in the format its extension names unless --format says (a standard key)",
    async run({ clients, values, args }) {
      const out = str(values, "out") ?? "";
      // The gateway's parser: the same checks and messages as POST /api/v1/audio/speech.
      // Only the flags given become fields: the parser takes a field present as a field set.
      const body: Record<string, unknown> = { model: str(values, "model"), input: args[0] };
      if (values.voice !== undefined) body.voice = str(values, "voice");
      const format = str(values, "format") ?? formatOfFile(out);
      if (format !== undefined) body.response_format = format;
      if (values.speed !== undefined) body.speed = num(values, "speed");
      const req = speechRequestFromJson(body, undefined);
      // The audio goes to the file as it arrives; a stream that fails leaves no partial file.
      const file = await open(out, "w");
      let start: SynthesisStart | undefined;
      let bytes = 0;
      try {
        for await (const msg of clients.speech.synthesize(req)) {
          if (msg.event.case === "start") start = msg.event.value;
          if (msg.event.case === "audio") {
            await file.write(msg.event.value);
            bytes += msg.event.value.length;
          }
        }
      } catch (err) {
        await file.close();
        await rm(out, { force: true });
        throw err;
      }
      await file.close();
      if (!start) throw new Error("the speech service ended the stream before any audio");
      const data = {
        generation_id: start.generationId,
        model: start.model,
        provider: start.provider,
        content_type: start.contentType,
        sample_rate: start.sampleRate,
        channels: start.channels,
        bytes,
        out,
      };
      return record(data, { data });
    },
  },
];
