import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const SECRET_TEXT = "The vault combination is seven seven three nine.";

describe("speech: generation records", () => {
  const h = useSpeechSystem();

  it("answers every success with an X-Generation-Id whose record describes it", async () => {
    const res = await h.speak({
      model: MODELS.espeak,
      voice: "alloy",
      input: SECRET_TEXT,
      response_format: "mp3",
      session_id: "sess-records",
      user: "user-records",
      trace: { trace_id: "t-records", team: "audio" },
    });
    expectAudio(res, "audio/mpeg");
    const id = res.headers.get("x-generation-id") ?? "";
    const record = await h.waitForGeneration(id);
    expect(record).to.include({
      id,
      model: MODELS.espeak,
      provider: "railgate",
      status: "completed",
      characters: [...SECRET_TEXT].length,
      response_format: "mp3",
      voice: "alloy",
      speed: 1,
      session_id: "sess-records",
      user: "user-records",
      bytes: res.bytes.byteLength,
      // Served through the global listener.
      data_region: "global",
    });
    expect(record.trace).to.deep.equal({ trace_id: "t-records", team: "audio" });
    expect(record.cost_usd).to.be.a("number").above(0);
    expect(record.duration_seconds).to.be.a("number").above(1);
    expect(Date.parse(record.created_at)).to.be.a("number").and.not.NaN;
  });

  it("never holds the input text, not even in part", async () => {
    const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: SECRET_TEXT });
    expectAudio(res);
    const id = res.headers.get("x-generation-id") ?? "";
    await h.waitForGeneration(id);
    const raw = await fetch(`${h.baseUrl}/api/v1/generation?id=${id}`, {
      headers: { authorization: `Bearer ${h.key.secret}` },
    });
    const text = await raw.text();
    expect(text).not.to.include(SECRET_TEXT);
    expect(text).not.to.include("vault combination");
  });

  it("records the provider that served and its price for upstream models", async () => {
    const res = await h.speak({ model: MODELS.shared, voice: "echo", input: "Priced." });
    expectAudio(res);
    const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
    expect(record).to.include({ model: MODELS.shared, provider: "acme", characters: 7 });
    // 20 USD per million characters in the test catalog.
    expect(record.cost_usd).to.be.closeTo((7 * 20) / 1_000_000, 1e-12);
  });

  it("gives each request its own id", async () => {
    const a = await h.speak({ model: MODELS.basic, voice: "alloy", input: "One." });
    const b = await h.speak({ model: MODELS.basic, voice: "alloy", input: "One." });
    expectAudio(a);
    expectAudio(b);
    expect(a.headers.get("x-generation-id")).not.to.equal(b.headers.get("x-generation-id"));
  });

  it("is 404 for an unknown id", async () => {
    const res = await h.generation("gen-00000000-0000-0000-0000-000000000000");
    expectError(res, 404, /not found/);
  });

  it("is 400 without an id", async () => {
    expectError(await h.api.get("/api/v1/generation"), 400, /id/);
    expectError(await h.api.get("/api/v1/generation?id="), 400, /id/);
  });

  it("is 400 for an unknown query parameter", async () => {
    expectError(await h.api.get("/api/v1/generation?id=gen-1&verbose=1"), 400, /verbose/);
  });

  it("is 404 for a key of another workspace, and readable by another key of the same one", async () => {
    const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: "Mine." });
    expectAudio(res);
    const id = res.headers.get("x-generation-id") ?? "";
    await h.waitForGeneration(id);

    const created = await h.admin.post("/api/v1/workspaces", { name: "Other speech workspace" });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const stranger = await h.createKey({ workspace_id: created.body.data.id });
    expect(stranger.workspaceId).not.to.equal(h.key.workspaceId);
    expectError(await h.generation(id, stranger.secret), 404);

    const colleague = await h.createKey();
    const read = await h.generation(id, colleague.secret);
    expect(read.status).to.equal(200);
    expect(read.body.data.id).to.equal(id);
  });

  it("is 401 without a key, and the management key reads any workspace's record", async () => {
    const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: "Mine." });
    const id = res.headers.get("x-generation-id") ?? "";
    expectError(await h.api.withKey(undefined).get(`/api/v1/generation?id=${id}`), 401);
    const got = await h.admin.get(`/api/v1/generation?id=${id}`);
    expect(got.status).to.equal(200);
    expect(got.body.data).to.include({ id, status: "completed" });
  });
});
