import { expect } from "chai";
import { ConfigError, loadConfig } from "../../platform/config/config.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

describe("speech: the default format (RAILGATE_SPEECH_DEFAULT_FORMAT)", () => {
  it("is pcm unless set, and is one of the six formats", () => {
    expect(loadConfig({}).speechDefaultFormat).to.equal("pcm");
    expect(loadConfig({ RAILGATE_SPEECH_DEFAULT_FORMAT: "mp3" }).speechDefaultFormat).to.equal(
      "mp3",
    );
    let problems: string[] = [];
    try {
      loadConfig({ RAILGATE_SPEECH_DEFAULT_FORMAT: "ogg" });
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems).to.deep.equal([
      'RAILGATE_SPEECH_DEFAULT_FORMAT must be one of pcm, mp3, wav, opus, aac, flac, got "ogg"',
    ]);
  });

  describe("set to mp3, as for OpenAI SDK users", () => {
    const h = useSpeechSystem({ speechDefaultFormat: "mp3" });

    it("a request that names no format gets mp3", async () => {
      const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: "No format." });
      expectAudio(res, "audio/mpeg");
    });

    it("a request that names one gets it", async () => {
      const res = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: "Raw samples.",
        response_format: "pcm",
      });
      expectAudio(res);
      expect(res.headers.get("content-type")).to.match(/^audio\/pcm/);
    });

    it("the OpenAPI document states the configured default", async () => {
      const doc = (await h.admin.get("/api/v1/openapi.json")).body;
      const body =
        doc.paths["/api/v1/audio/speech"].post.requestBody.content["application/json"].schema;
      expect(body.properties.response_format.default).to.equal("mp3");
      expect(body.properties.response_format.description).to.contain("mp3");
    });
  });
});
