import { expect } from "chai";
import { rpcAccess } from "../../../domain/auth/caller-auth.js";
import { accessOf } from "../../../gateway/route-access.js";
import { routes } from "../../../gateway/routes.js";
import { AccountService } from "../../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../../../gen/railgate/speech/v1/speech_service_pb.js";

describe("gateway: route access comes from the RPCs' proto option", () => {
  it("is the access the proto states for the RPCs a route calls", () => {
    expect(accessOf(SpeechService.method.synthesize)).to.equal("standard");
    expect(accessOf(SpeechService.method.listModels)).to.equal("public");
    expect(accessOf(AccountService.method.getCurrentKey)).to.equal("any-key");
    // A method without the option needs a management key.
    expect(
      accessOf(GuardrailService.method.getGuardrail, GuardrailService.method.deleteGuardrail),
    ).to.equal("management");
  });

  it("refuses a route whose RPCs disagree, naming both", () => {
    expect(() =>
      accessOf(SpeechService.method.synthesize, SpeechService.method.listModels),
    ).to.throw(/SpeechService\.Synthesize \(standard\).*SpeechService\.ListModels \(public\)/);
  });

  it("refuses an RPC only gateways may call", () => {
    expect(rpcAccess(AccountService.method.watchInvalidations)).to.equal("gateway");
    expect(() => accessOf(AccountService.method.watchInvalidations)).to.throw(/is for gateways/);
  });

  it("gives the speech route the standard key and the key routes the management key", () => {
    const byPattern = new Map(routes.map((r) => [r.pattern, r.access]));
    expect(byPattern.get("/api/v1/audio/speech")).to.equal("standard");
    expect(byPattern.get("/api/v1/keys")).to.equal("management");
    expect(byPattern.get("/api/v1/key")).to.equal("any-key");
    expect(byPattern.get("/api/v1/generations")).to.equal("any-key");
    expect(byPattern.get("/api/v1/models")).to.equal("public");
  });
});
