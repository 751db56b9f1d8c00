import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ModelCatalog } from "../../../domain/catalog/model-catalog.js";
import { SPEECH_LIMITS } from "../../../domain/limits.js";
import { VoiceSchema } from "../../../gen/railgate/speech/v1/speech_pb.js";
import { SynthesizeRequestSchema } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { defaultCatalog } from "../../../services/speech/catalog/load-catalog.js";
import { planSpeech } from "../../../services/speech/request.js";

const catalog = new ModelCatalog(defaultCatalog(), [
  create(VoiceSchema, { id: "en-us", name: "English (America)", languages: ["en"] }),
]);

function request(extra: { trace?: JsonObject; options?: Record<string, JsonObject> }) {
  return create(SynthesizeRequestSchema, {
    model: "railgate/espeak-ng",
    voice: "en-us",
    input: { case: "text", value: "Hello." },
    trace: extra.trace,
    provider: extra.options ? { options: extra.options } : undefined,
  });
}

function nested(depth: number): JsonObject {
  let v: JsonObject = { leaf: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

function invalid(extra: Parameters<typeof request>[0], message: RegExp): void {
  try {
    planSpeech(request(extra), catalog);
  } catch (err) {
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).to.match(message);
    return;
  }
  expect.fail("planSpeech accepted the request");
}

/** What a direct gRPC caller (not the gateway) sends is held to the gateway's rules. */
describe("SpeechService request validation: trace and provider.options limits", () => {
  it("takes a trace and options within the limits", () => {
    const plan = planSpeech(
      request({
        trace: { trace_id: "t-1", ...nested(7) },
        options: { acme: { temperature: 0.5 } },
      }),
      catalog,
    );
    expect(plan.trace?.trace_id).to.equal("t-1");
  });

  it(`refuses a trace deeper than ${SPEECH_LIMITS.trace.maxDepth} levels`, () => {
    invalid({ trace: nested(20) }, /^trace may nest at most 8 levels deep$/);
  });

  it(`refuses a trace larger than ${SPEECH_LIMITS.trace.maxBytes} bytes or with too many items`, () => {
    invalid({ trace: { blob: "x".repeat(20_000) } }, /^trace must be at most 16384 bytes as JSON$/);
    invalid({ trace: { list: new Array(5000).fill(0) } }, /^trace may hold at most 1000 keys/);
  });

  it("refuses provider.options past the limits, naming the provider", () => {
    invalid(
      { options: { acme: nested(12) } },
      /^provider\.options\.acme may nest at most 8 levels/,
    );
    invalid(
      { options: { acme: { a: "x".repeat(10_000) }, other: { b: "y".repeat(10_000) } } },
      /^provider\.options\.other must be at most 16384 bytes as JSON/,
    );
  });
});
