import { create } from "@bufbuild/protobuf";
import {
  SpeechService,
  SynthesizeRequestSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject } from "../http-io.js";
import { SPEECH_BODY_SCHEMA, speechRequestFromJson } from "../json/speech-json.js";
import { accessOf } from "../route-access.js";
import { streamSpeech } from "../speech-stream.js";

/** What a refused key's call carries: nothing of a body that is never read. */
const EMPTY_REQUEST = create(SynthesizeRequestSchema);

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
        if (refused) {
          // A known key refused before its body is read (the body is never read then): the
          // service refuses the call the same way and logs it, and the client gets this refusal.
          try {
            for await (const _ of ctx.clients.speech.synthesize(EMPTY_REQUEST, ctx.call)) break;
          } catch {
            // The service's refusal: the client's answer is the gateway's own, the same.
          }
          throw refused;
        }
        const body = await readJsonObject(ctx.req, ctx.maxSpeechBodyBytes);
        const header = ctx.req.headers["x-session-id"];
        const req = speechRequestFromJson(
          body,
          Array.isArray(header) ? header[0] : header,
          ctx.speechDefaultFormat,
        );
        await streamSpeech(ctx, req);
      },
    },
  },
];
