import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { startTestSystem } from "../kit/system.js";

const protoRoot = fileURLToPath(new URL("../../../proto", import.meta.url));

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

type ReflectionClient = grpc.Client & {
  ServerReflectionInfo(md?: grpc.Metadata): grpc.ClientDuplexStream<unknown, ReflectionResponse>;
};

/** A plain grpc-js reflection client (no Connect, no Railgate protos): what grpcurl is. */
function reflectionClient(version: "v1" | "v1alpha", port: number): ReflectionClient {
  const def = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, {
    includeDirs: [protoRoot],
    keepCase: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { reflection: Record<string, { ServerReflection: new (...a: unknown[]) => unknown }> };
  };
  const Ctor = pkg.grpc.reflection[version]?.ServerReflection as unknown as new (
    a: string,
    c: grpc.ChannelCredentials,
  ) => ReflectionClient;
  return new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** Sends each request on one bidi stream (no credentials) and collects one answer per request. */
async function ask(client: ReflectionClient, requests: object[]): Promise<ReflectionResponse[]> {
  const call = client.ServerReflectionInfo(new grpc.Metadata());
  const answers: ReflectionResponse[] = [];
  const done = new Promise<void>((resolve, reject) => {
    call.on("data", (r: ReflectionResponse) => answers.push(r));
    call.on("error", reject);
    call.on("end", () => resolve());
  });
  for (const r of requests) call.write(r);
  call.end();
  await done;
  return answers;
}

function fileNames(r: ReflectionResponse | undefined): string[] {
  return (r?.file_descriptor_response?.file_descriptor_proto ?? []).map(
    (b) => fromBinary(FileDescriptorProtoSchema, b).name,
  );
}

describe("gRPC server reflection (plain @grpc/grpc-js, no credentials)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  const clients: ReflectionClient[] = [];
  const client = (version: "v1" | "v1alpha", port: number) => {
    const c = reflectionClient(version, port);
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url);
  });

  after(async () => {
    for (const c of clients) c.close();
    await system?.close();
    await redis?.stop();
  });

  it("lists each server's own services, health and reflection included", async () => {
    const [g] = await ask(client("v1", system.guardrailGrpcPort), [{ list_services: "" }]);
    const [s] = await ask(client("v1", system.speechGrpcPort), [{ list_services: "" }]);
    const names = (r?: ReflectionResponse) => r?.list_services_response?.service.map((x) => x.name);
    expect(names(g)).to.have.members([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "railgate.account.v1.AccountService",
      "railgate.guardrail.v1.GuardrailService",
      "railgate.guardrail.v1.GuardrailPolicyService",
      "railgate.webhook.v1.WebhookService",
    ]);
    expect(names(s)).to.have.members([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "railgate.speech.v1.SpeechService",
    ]);
  });

  it("answers file_containing_symbol for a service, a method, a message and a field, with imports", async () => {
    const answers = await ask(client("v1", system.speechGrpcPort), [
      { file_containing_symbol: "railgate.speech.v1.SpeechService" },
      { file_containing_symbol: "railgate.speech.v1.SpeechService.Synthesize" },
      { file_containing_symbol: "railgate.speech.v1.Generation" },
      { file_containing_symbol: "railgate.speech.v1.Generation.model" },
    ]);
    expect(answers).to.have.length(4);
    const [service, method, message, field] = answers.map(fileNames);
    expect(service?.[0]).to.equal("railgate/speech/v1/speech_service.proto");
    // The imports come along, so a client can decode every message of the service.
    expect(service).to.include("railgate/speech/v1/speech.proto");
    expect(service).to.include("google/protobuf/struct.proto");
    expect(method?.[0]).to.equal("railgate/speech/v1/speech_service.proto");
    expect(message?.[0]).to.equal("railgate/speech/v1/speech.proto");
    expect(field?.[0]).to.equal("railgate/speech/v1/speech.proto");
  });

  it("answers file_by_filename, and NOT_FOUND for what the server does not serve", async () => {
    const answers = await ask(client("v1", system.guardrailGrpcPort), [
      { file_by_filename: "railgate/guardrail/v1/guardrail.proto" },
      { file_containing_symbol: "railgate.speech.v1.SpeechService" },
      { file_by_filename: "no/such.proto" },
    ]);
    expect(fileNames(answers[0])[0]).to.equal("railgate/guardrail/v1/guardrail.proto");
    expect(answers[1]?.error_response?.error_code).to.equal(grpc.status.NOT_FOUND);
    expect(answers[1]?.error_response?.error_message).to.contain(
      "railgate.speech.v1.SpeechService",
    );
    expect(answers[2]?.error_response?.error_code).to.equal(grpc.status.NOT_FOUND);
  });

  it("serves v1alpha too (older grpcurl and grpc_cli ask for it)", async () => {
    const answers = await ask(client("v1alpha", system.guardrailGrpcPort), [
      { list_services: "" },
      { file_containing_symbol: "railgate.guardrail.v1.GuardrailService" },
    ]);
    expect(answers[0]?.list_services_response?.service.map((x) => x.name)).to.include(
      "railgate.guardrail.v1.GuardrailService",
    );
    expect(fileNames(answers[1])[0]).to.equal("railgate/guardrail/v1/guardrail_service.proto");
  });
});
