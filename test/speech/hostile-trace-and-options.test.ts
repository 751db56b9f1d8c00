import { expect } from "chai";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const TEXT = "Hello.";

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

describe("speech: trace and provider.options are bounded", () => {
  const h = useSpeechSystem();
  const ok = { model: MODELS.basic, voice: "alloy", input: TEXT };

  it(`takes a trace of ${SPEECH_LIMITS.trace.maxDepth} levels`, async () => {
    expectAudio(await h.speak({ ...ok, trace: nested(SPEECH_LIMITS.trace.maxDepth) }));
  });

  it("answers 400 naming trace for one nested 50 deep (it was a 500)", async () => {
    const res = await h.speak({ ...ok, trace: nested(50) });
    expectError(res, 400, /^trace may nest at most 8 levels deep$/);
    expect(h.fakes.acme.requests).to.be.empty;
  });

  it("answers 400 naming trace past its size", async () => {
    const res = await h.speak({ ...ok, trace: { note: "x".repeat(SPEECH_LIMITS.trace.maxBytes) } });
    expectError(res, 400, /^trace must be at most 16384 bytes as JSON$/);
  });

  it("answers 400 naming provider.options.<slug> past the limits", async () => {
    expectError(
      await h.speak({ ...ok, provider: { options: { acme: nested(12) } } }),
      400,
      /^provider\.options\.acme may nest at most 8 levels deep/,
    );
    expectError(
      await h.speak({
        ...ok,
        provider: {
          options: { acme: { a: "x".repeat(10_000) }, other: { b: "y".repeat(10_000) } },
        },
      }),
      400,
      /^provider\.options\.other must be at most 16384 bytes as JSON/,
    );
    expectError(
      await h.speak({ ...ok, provider: { options: { ["k".repeat(70_000)]: 5 } } }),
      400,
      /^provider\.options\["k+…"\] goes past the limits/,
    );
  });

  it("refuses a 6.4 MB trace of 3.2M items with a 4xx, and speech keeps working for every tenant", async function () {
    this.timeout(60_000);
    const other = await h.createKey();
    expectAudio(await h.speak(ok, { key: other.secret }));
    const body = `{"model":"${MODELS.basic}","voice":"alloy","input":"hi","trace":{"a":[${"0,".repeat(3_200_000)}0]}}`;
    for (const key of ["garbage-bearer-0123456789", h.key.secret]) {
      const res = await h.speak(body, { key });
      expect(res.status, JSON.stringify(res.body)).to.be.within(400, 499);
      expectError(res, res.status);
    }
    // The internal session was never poisoned: both tenants are served at once.
    for (let i = 0; i < 3; i++) {
      expectAudio(await h.speak(ok));
      expectAudio(await h.speak(ok, { key: other.secret }));
    }
  });
});
