import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { builtInEspeak, writeCatalogFile } from "../kit/catalog-entries.js";
import { expectError, expectNoLeaks, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { captureLogs, type LogCapture, type LogLine } from "../kit/log-capture.js";
import { pollUntil } from "../kit/poll.js";
import { makeTempDir } from "../kit/processes.js";
import { MODELS } from "../kit/speech-catalog.js";
import { useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const MISCONFIGURED = "railgate/espeak-misconfigured";

/** Everything logged for a request, as one string to match the detail in. */
const joined = (lines: LogLine[]) => lines.map((l) => JSON.stringify(l)).join("\n");

/**
 * A 502 once read `Provider dead could not be reached: connect ECONNREFUSED
 * 127.0.0.1:47070`. A client now reads the provider and the kind of failure only; the detail
 * (the address, the error code, the provider's own words) is logged with the request id.
 * Over real HTTP, in either topology (RAILGATE_TEST_TRANSPORT=grpc puts the gRPC hop back).
 */
describe("speech: failure messages name the provider and the kind, the log has the detail", () => {
  const h = useSpeechSystem();
  let logs: LogCapture;
  beforeEach(() => {
    logs = captureLogs("warn");
  });
  afterEach(() => logs.restore());

  /** Speaks with a request id of its own, and returns the answer and what was logged for it. */
  async function speakFailing(model: string, status: number, message: RegExp) {
    const requestId = `detail-${model.replace(/\W/g, "-")}-${Date.now()}`;
    const res = await h.speak(
      { model, voice: "alloy", input: "A request that fails." },
      { headers: { "x-request-id": requestId } },
    );
    expectError(res, status, message);
    expectNoLeaks(res.body.error.message);
    const logged = await pollUntil(
      async () => logs.forRequest(requestId),
      (lines) => lines.some((l) => l.msg === "request failed"),
    );
    return { message: res.body.error.message as string, log: joined(logged) };
  }

  it("unreachable provider: 502 'could not be reached (connection refused)'; the address is logged", async () => {
    const { message, log } = await speakFailing(MODELS.dead, 502, /^Provider dead\b/);
    expect(message).to.equal("Provider dead could not be reached (connection refused)");
    expect(log).to.match(/ECONNREFUSED 127\.0\.0\.1:\d+/);
  });

  it("provider error status: 502 'returned an error (HTTP 500)', without the provider's words; they are logged", async () => {
    const { message, log } = await speakFailing(MODELS.broken, 502, /^Provider broken\b/);
    expect(message).to.equal("Provider broken returned an error (HTTP 500)");
    expect(log).to.include("fake status 500");
  });

  it("provider refusing our key: 502 naming the status, the provider's words logged", async () => {
    const { message, log } = await speakFailing(MODELS.locked, 502, /^Provider locked\b/);
    expect(message).to.equal("Provider locked returned an error (HTTP 401)");
    expect(log).to.include("Incorrect API key provided");
  });

  it("overloaded provider: 529 naming the status only", async () => {
    const { message, log } = await speakFailing(MODELS.overloaded, 529, /^Provider overloaded\b/);
    expect(message).to.equal("Provider overloaded is overloaded (HTTP 529)");
    expect(log).to.include("fake status 529");
  });

  it("provider that drops the connection: 502 'connection closed'; the socket error is logged", async () => {
    const { message, log } = await speakFailing(MODELS.dropping, 502, /^Provider dropping\b/);
    expect(message).to.equal("Provider dropping could not be reached (connection closed)");
    expect(log).to.match(/UND_ERR_SOCKET|other side closed/);
  });

  it("provider that does not answer: 524 'timed out'; undici's error is logged", async () => {
    const { message, log } = await speakFailing(MODELS.hanging, 524, /^Provider hanging\b/);
    expect(message).to.match(/^Provider hanging timed out after \d+ ms$/);
    expect(log).to.match(/UND_ERR_HEADERS_TIMEOUT|Headers Timeout/i);
  });
});

/**
 * The embedded engine's own exception (here: a catalog that lists a voice the engine does not
 * have, so the adapter throws before the first byte) never reaches the client: the message names
 * the provider and says it failed before producing audio; the exception is logged.
 */
describe("speech: an embedded engine failure names the provider, the log has the exception", function () {
  this.timeout(120_000);
  let redis: LaneStore;
  let system: RunningSystem;
  let speaker: Api;

  before(async () => {
    redis = await startLaneStore();
    const catalog = writeCatalogFile(makeTempDir("rg-engine-errors-"), {
      providers: {},
      models: [
        builtInEspeak(),
        {
          ...builtInEspeak(),
          id: MISCONFIGURED,
          aliases: [],
          name: "An engine model with a voice the engine lacks",
          voices: ["no-such-espeak-voice"],
        },
      ],
    });
    system = await startTestSystem(redis.url, {
      embeddedEngine: "auto",
      enginePoolSize: 1,
      env: { RAILGATE_SPEECH_CATALOG_FILE: catalog },
    });
    const admin = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    const key = await admin.post("/api/v1/keys", { name: "engine errors" });
    expectStatus(key, 201);
    speaker = admin.withKey(key.body.key);
  });

  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  it("502 'Provider railgate failed before producing audio'; the engine's words are logged", async () => {
    const logs = captureLogs("warn");
    try {
      const requestId = `engine-${Date.now()}`;
      const res = await speaker.request(
        "POST",
        "/api/v1/audio/speech",
        { model: MISCONFIGURED, voice: "no-such-espeak-voice", input: "Hello." },
        { headers: { "x-request-id": requestId } },
      );
      expectError(res, 502, /^Provider railgate failed before producing audio$/);
      expectNoLeaks(res.body.error.message);
      const logged = await pollUntil(
        async () => logs.forRequest(requestId),
        (lines) => lines.some((l) => l.msg === "call failed"),
      );
      expect(joined(logged)).to.include("unknown voice no-such-espeak-voice");
    } finally {
      logs.restore();
    }
  });
});
