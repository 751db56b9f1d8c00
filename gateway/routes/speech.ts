import {
  SpeechService,
  type SynthesizeRequest,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject } from "../http-io.js";
import { SPEECH_BODY_SCHEMA, speechRequestFromJson } from "../json/speech-json.js";
import { accessOf } from "../route-access.js";
import { streamSpeech } from "../speech-stream.js";

export const speechRoutes: Route[] = [
  {
    pattern: "/api/v1/audio/speech",
    access: accessOf(SpeechService.method.synthesize),
    logsKeyRefusals: true,
    docs: {
      POST: {
        summary: "Speak text: the audio streams back as it is made",
        body: SPEECH_BODY_SCHEMA,
        status: 200,
        produces: "audio",
        description:
          "Audio in response_format, streamed; RateLimit-* headers when the key is rate limited",
      },
    },
    methods: {
      async POST(ctx) {
        const refused = ctx.keyRefusal;
        let req: SynthesizeRequest;
        try {
          const body = await readJsonObject(ctx.req, ctx.maxSpeechBodyBytes);
          const header = ctx.req.headers["x-session-id"];
          req = speechRequestFromJson(
            body,
            Array.isArray(header) ? header[0] : header,
            ctx.speechDefaultFormat,
          );
        } catch (err) {
          // A refused key's refusal comes first: its body's faults are not its answer.
          throw refused ?? err;
        }
        // The service refuses a refused key's request the same way, and logs it.
        await streamSpeech(ctx, req);
      },
    },
  },
];
