import { expect } from "chai";
import { rpcAccess } from "../../../domain/auth/caller-auth.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../../../gen/railgate/speech/v1/speech_service_pb.js";
import { WebhookService } from "../../../gen/railgate/webhook/v1/webhook_service_pb.js";

describe("RPC access: read from the proto's method options", () => {
  it("states who may call each RPC that is not for management keys alone", () => {
    const stated = [AccountService, SpeechService, GuardrailService, WebhookService].flatMap((s) =>
      s.methods
        .filter((m) => rpcAccess(m) !== "management")
        .map((m) => `${s.name}/${m.name}: ${rpcAccess(m)}`),
    );
    expect(stated).to.deep.equal([
      "AccountService/Authenticate: any-key",
      "AccountService/GetCurrentKey: any-key",
      "AccountService/WatchInvalidations: gateway",
      "SpeechService/Synthesize: standard",
      "SpeechService/ListModels: public",
      "SpeechService/ListUserModels: standard",
      "SpeechService/GetGeneration: any-key",
      "SpeechService/ListGenerations: any-key",
      "SpeechService/GetActivity: any-key",
      "SpeechService/GetUsage: any-key",
    ]);
  });

  it("keeps the standard health service public", () => {
    expect(Health.methods.map(rpcAccess)).to.deep.equal(Health.methods.map(() => "public"));
  });
});
