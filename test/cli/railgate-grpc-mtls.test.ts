import { expect } from "chai";
import { type GuardrailServer, startGuardrailServer } from "../../apps/control-plane/server.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";
import { RedisStore } from "../../store/redis-store.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { makeTestPki, type TestPki } from "../kit/tls-certs.js";
import { runBin } from "./bin.js";

/**
 * --grpc on a deployment whose hop is mTLS: the CLI takes the hop's files from the
 * configuration (RAILGATE_GRPC_TLS_*), as a gateway does, and still calls with its key.
 */
describe("railgate CLI in gRPC mode over mTLS", function () {
  this.timeout(60_000);
  let pki: TestPki;
  let redis: ThrowawayRedis;
  let store: RedisStore;
  let server: GuardrailServer;

  before(async () => {
    pki = makeTestPki();
    redis = await startRedis();
    store = new RedisStore(redis.client(), "rg");
    server = await startGuardrailServer(store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
      tls: loadGrpcTls({
        certFile: pki.serverCertFile,
        keyFile: pki.serverKeyFile,
        caFile: pki.caFile,
      }),
    });
  });

  after(async () => {
    await server?.close();
    await store?.close();
    await redis?.stop();
  });

  it("calls the TLS service with the configured certificate files, and fails without them", async () => {
    const env = {
      RAILGATE_KEY: MANAGEMENT_KEY,
      RAILGATE_GUARDRAIL_GRPC_URL: `https://127.0.0.1:${server.port}`,
    };
    const tls = {
      RAILGATE_GRPC_TLS_CERT: pki.gatewayCertFile,
      RAILGATE_GRPC_TLS_KEY: pki.gatewayKeyFile,
      RAILGATE_GRPC_TLS_CA: pki.caFile,
    };
    const run = await runBin(["--grpc", "workspaces", "list", "--json"], { ...env, ...tls });
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout).data).to.be.an("array").that.is.not.empty;
    // Without the CA the service's certificate is not trusted: the call fails (exit 1).
    const untrusted = await runBin(["--grpc", "workspaces", "list"], env);
    expect(untrusted.code).to.equal(1);
    expect(untrusted.stderr).to.match(/^railgate: \[\w+\] .*certificate/);
  });
});
