import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import type { ReceivedRequest } from "../kit/fake-openai.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const TEXT = "Observability test.";
/** Every field a provider may receive from us; session, trace and user are never among them. */
const UPSTREAM_FIELDS = ["model", "input", "voice", "response_format"];

/** Nothing of `secret` in what the provider received: not in the body, not in a header. */
function expectNotSent(req: ReceivedRequest | undefined, ...secrets: string[]): void {
  expect(req, "the provider got the request").to.exist;
  expect(Object.keys(req?.body ?? {}).sort()).to.deep.equal([...UPSTREAM_FIELDS].sort());
  const seen = JSON.stringify(req?.body) + JSON.stringify(req?.headers);
  for (const s of secrets) expect(seen).not.to.include(s);
}

describe("speech: session_id, trace and user", () => {
  const h = useSpeechSystem();
  const idOf = (res: { headers: Headers }) => res.headers.get("x-generation-id") ?? "";

  describe("session_id", () => {
    it("is kept in the generation record and never sent to the provider", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        session_id: "sess-body-only-1",
      });
      expectAudio(res);
      expectNotSent(h.fakes.acme.requests[0], "sess-body-only-1");
      const record = await h.waitForGeneration(idOf(res));
      expect(record.session_id).to.equal("sess-body-only-1");
    });

    it("comes from the x-session-id header when the body has none", async () => {
      const res = await h.speak(
        { model: MODELS.basic, voice: "alloy", input: TEXT },
        { headers: { "x-session-id": "sess-header-2" } },
      );
      expectAudio(res);
      expectNotSent(h.fakes.acme.requests[0], "sess-header-2");
      const record = await h.waitForGeneration(idOf(res));
      expect(record.session_id).to.equal("sess-header-2");
    });

    it("of the body wins over the header", async () => {
      const res = await h.speak(
        { model: MODELS.basic, voice: "alloy", input: TEXT, session_id: "sess-body-3" },
        { headers: { "x-session-id": "sess-header-3" } },
      );
      expectAudio(res);
      expectNotSent(h.fakes.acme.requests[0], "sess-body-3", "sess-header-3");
      const record = await h.waitForGeneration(idOf(res));
      expect(record.session_id).to.equal("sess-body-3");
    });

    it("takes 256 characters and is 400 beyond, in the body or the header", async () => {
      const ok = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        session_id: "s".repeat(256),
      });
      expectAudio(ok);
      const long = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        session_id: "s".repeat(257),
      });
      expectError(long, 400, /session_id/);
      const header = await h.speak(
        { model: MODELS.basic, voice: "alloy", input: TEXT },
        { headers: { "x-session-id": "h".repeat(257) } },
      );
      expectError(header, 400, /session_id/);
      expect(h.fakes.acme.requests).to.have.length(1);
    });

    it("is 400 when not a string", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        session_id: 12,
      });
      expectError(res, 400, /session_id/);
    });
  });

  describe("trace", () => {
    for (const key of [
      "trace_id",
      "trace_name",
      "span_name",
      "generation_name",
      "parent_span_id",
    ]) {
      it(`is 400 when ${key} is not a string, naming it`, async () => {
        const res = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: TEXT,
          trace: { [key]: 42 },
        });
        expectError(res, 400, new RegExp(`trace\\.${key}`));
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("keeps the known and the custom keys in the generation record, never sent upstream", async () => {
      const trace = {
        trace_id: "trace-abc",
        trace_name: "checkout",
        span_name: "tts",
        generation_name: "greeting",
        parent_span_id: "span-1",
        customer_tier: "gold",
        attempt: 2,
        tags: ["a", "b"],
        nested: { flag: true },
      };
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, trace });
      expectAudio(res);
      expectNotSent(h.fakes.acme.requests[0], "trace-abc", "customer_tier", "checkout");
      const record = await h.waitForGeneration(idOf(res));
      expect(record.trace).to.deep.equal(trace);
    });

    it("is 400 when not an object", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, trace: "t-1" });
      expectError(res, 400, /trace/);
    });
  });

  describe("user", () => {
    it("is kept in the generation record and never sent to the provider", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        user: "end-user-42",
      });
      expectAudio(res);
      expectNotSent(h.fakes.acme.requests[0], "end-user-42");
      const record = await h.waitForGeneration(idOf(res));
      expect(record.user).to.equal("end-user-42");
    });

    it("takes 256 characters and is 400 beyond", async () => {
      const ok = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        user: "u".repeat(256),
      });
      expectAudio(ok);
      const long = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        user: "u".repeat(257),
      });
      expectError(long, 400, /user/);
      expect(h.fakes.acme.requests).to.have.length(1);
    });

    it("is 400 when not a string", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, user: 5 });
      expectError(res, 400, /user/);
    });
  });

  it("leaves session_id, user and trace null in the record when not given", async () => {
    const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: TEXT });
    expectAudio(res);
    const record = await h.waitForGeneration(idOf(res));
    expect(record).to.include({ session_id: null, user: null, trace: null });
  });
});
