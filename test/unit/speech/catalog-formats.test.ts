import { expect } from "chai";
import { ModelCatalog } from "../../../domain/catalog/model-catalog.js";
import { AudioFormat } from "../../../gen/railgate/speech/v1/speech_pb.js";
import { defaultCatalog, parseCatalog } from "../../../services/speech/catalog/load-catalog.js";

const ENDPOINT = {
  provider: "railgate",
  adapter: "espeak",
  price_per_million_chars: 1,
  capabilities: {},
  data_policy: {},
};

function endpointWith(extra: Record<string, unknown>) {
  return parseCatalog({
    models: [{ id: "acme/one", voices: ["a"], endpoints: [{ ...ENDPOINT, ...extra }] }],
  }).models[0]?.endpoints[0];
}

describe("speech catalog: the formats an endpoint produces (`formats`)", () => {
  it("takes a list of OpenAI's formats, kept in one order, each once", () => {
    expect(endpointWith({ formats: ["flac", "mp3", "opus", "mp3"] })?.formats).to.deep.equal([
      AudioFormat.MP3,
      AudioFormat.OPUS,
      AudioFormat.FLAC,
    ]);
  });

  it("defaults to mp3, wav and pcm: what every endpoint served before formats were declared", () => {
    expect(endpointWith({})?.formats).to.deep.equal([
      AudioFormat.MP3,
      AudioFormat.WAV,
      AudioFormat.PCM,
    ]);
  });

  for (const [formats, why] of [
    [[], /formats must be a non-empty array/],
    ["mp3", /formats must be a non-empty array/],
    [
      ["mp3", "ogg"],
      /formats\[1\] must be one of "mp3", "opus", "aac", "flac", "wav" or "pcm", got "ogg"/,
    ],
  ] as const) {
    it(`refuses formats ${JSON.stringify(formats)}, naming the field`, () => {
      expect(() => endpointWith({ formats })).to.throw(why);
    });
  }

  it("the built-in engine and OpenAI's endpoints produce all six", () => {
    for (const model of defaultCatalog({}).models) {
      expect(model.endpoints[0]?.formats, model.id).to.deep.equal([
        AudioFormat.MP3,
        AudioFormat.OPUS,
        AudioFormat.AAC,
        AudioFormat.FLAC,
        AudioFormat.WAV,
        AudioFormat.PCM,
      ]);
    }
  });

  it("ListModels carries them as the proto enum", () => {
    const catalog = new ModelCatalog(
      parseCatalog({
        models: [
          { id: "acme/one", voices: ["a"], endpoints: [{ ...ENDPOINT, formats: ["opus", "pcm"] }] },
        ],
      }),
      [],
    );
    expect(catalog.models()[0]?.endpoints[0]?.formats).to.deep.equal([
      AudioFormat.OPUS,
      AudioFormat.PCM,
    ]);
  });
});
