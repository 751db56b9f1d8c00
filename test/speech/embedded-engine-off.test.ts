import { fileURLToPath } from "node:url";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { Api } from "../kit/http.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/** The committed docker-compose example: the embedded model plus OpenAI's tts-1. */
const EXAMPLE_CATALOG = fileURLToPath(
  new URL("../../../deploy/catalog.example.json", import.meta.url),
);

/**
 * An image built with WITH_ESPEAK=false has no eSpeak NG package; RAILGATE_EMBEDDED_ENGINE=off
 * takes the same path (the engine is not started, its catalog entries are skipped), so the
 * system is checked to start, report healthy and serve the rest of its catalog without it.
 */
describe("speech: without the embedded engine (RAILGATE_EMBEDDED_ENGINE=off)", () => {
  let redis: LaneStore;
  let system: RunningSystem;
  let admin: Api;
  let anon: Api;

  before(async () => {
    redis = await startLaneStore();
    system = await startTestSystem(redis.url, {
      env: {
        RAILGATE_EMBEDDED_ENGINE: "off",
        RAILGATE_SPEECH_CATALOG_FILE: EXAMPLE_CATALOG,
        // Lets the example's OpenAI endpoint resolve its key; no request reaches OpenAI here.
        OPENAI_API_KEY: "sk-test-never-sent",
      },
    });
    const base = `http://127.0.0.1:${system.gatewayPorts.global}`;
    admin = new Api(base, MANAGEMENT_KEY);
    anon = new Api(base);
  });
  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  it("reports healthy without the engine", async () => {
    const res = await anon.get("/healthz");
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: "ok", region: "global" });
  });

  it("lists the upstream models and not the embedded one", async () => {
    const res = await anon.get("/api/v1/models?output_modalities=speech");
    expect(res.status).to.equal(200);
    const ids = res.body.data.map((m: { id: string }) => m.id);
    expect(ids).to.deep.equal(["openai/tts-1"]);
  });

  it("refuses speech with the embedded model as an unknown model", async () => {
    const created = await admin.post("/api/v1/keys", { name: "no-engine" });
    expect(created.status).to.equal(201);
    const res = await admin
      .withKey(created.body.key)
      .post("/api/v1/audio/speech", { model: "railgate/espeak-ng", voice: "en-us", input: "Hi" });
    expect(res.status).to.be.within(400, 499);
    expect(res.body.error.message).to.include("railgate/espeak-ng");
  });
});
