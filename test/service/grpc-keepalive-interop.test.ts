import { fileURLToPath } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { expect } from "chai";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { type RunningServer, startGrpcServer } from "../../platform/rpc/grpc-server.js";
import { HealthServiceImpl, LIVENESS_SERVICE } from "../../platform/rpc/health.js";
import {
  createHttp2GrpcTransport,
  type Http2GrpcTransport,
} from "../../platform/rpc/http2-grpc-transport.js";
import { served } from "../../platform/rpc/in-process-transport.js";
import { sleep } from "../kit/poll.js";

const protoRoot = fileURLToPath(new URL("../../../proto", import.meta.url));

type HealthCtor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => grpc.Client & Record<string, (...args: unknown[]) => unknown>;

/** grpc.health.v1.Health from its .proto, as any plain grpc-js program loads it. */
function healthDefinition(): { service: grpc.ServiceDefinition; Client: HealthCtor } {
  const def = protoLoader.loadSync("grpc/health/v1/health.proto", {
    includeDirs: [protoRoot],
    enums: String,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: HealthCtor & { service: grpc.ServiceDefinition } } } };
  };
  const Health = pkg.grpc.health.v1.Health;
  return { service: Health.service, Client: Health };
}

/** Pings every 50 ms: a peer that took pings badly (GOAWAY, a reset) would show within a second. */
const PINGING = {
  pingIntervalMs: 50,
  pingTimeoutMs: 2_000,
  connectTimeoutMs: 2_000,
  connectionsPerAddress: 2,
};

describe("the gateway's gRPC client and keepalive pings against plain @grpc/grpc-js", () => {
  describe("our client, pinging, against a plain grpc-js server", () => {
    let server: grpc.Server;
    let port: number;
    let transport: Http2GrpcTransport;

    before(async () => {
      const { service } = healthDefinition();
      server = new grpc.Server();
      server.addService(service, {
        check(
          call: grpc.ServerUnaryCall<{ service: string }, unknown>,
          cb: grpc.sendUnaryData<unknown>,
        ) {
          if (call.request.service === "unknown") {
            cb({ code: grpc.status.NOT_FOUND, details: "unknown service" });
            return;
          }
          cb(null, { status: "SERVING" });
        },
        watch(call: grpc.ServerWritableStream<{ service: string }, unknown>) {
          let n = 0;
          const timer = setInterval(() => {
            call.write({ status: n++ % 2 === 0 ? "SERVING" : "NOT_SERVING" });
            if (n === 5) {
              clearInterval(timer);
              call.end();
            }
          }, 40);
          call.on("cancelled", () => clearInterval(timer));
        },
      });
      port = await new Promise<number>((resolve, reject) =>
        server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
          err ? reject(err) : resolve(p),
        ),
      );
      transport = createHttp2GrpcTransport({
        baseUrl: `http://127.0.0.1:${port}`,
        maxMessageBytes: 1 << 20,
        pool: PINGING,
      });
    });

    after(async () => {
      transport?.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    });

    it("makes unary and server-streaming calls over connections pinged throughout, with the server's statuses", async () => {
      const client = createClient(Health, transport);
      const deadline = performance.now() + 1_000;
      let calls = 0;
      while (performance.now() < deadline) {
        const [checked, watched] = await Promise.all([
          client.check({ service: "" }),
          (async () => {
            const statuses: Status[] = [];
            for await (const m of client.watch({ service: "" })) statuses.push(m.status);
            return statuses;
          })(),
        ]);
        expect(checked.status).to.equal(Status.SERVING);
        expect(watched).to.deep.equal([
          Status.SERVING,
          Status.NOT_SERVING,
          Status.SERVING,
          Status.NOT_SERVING,
          Status.SERVING,
        ]);
        calls++;
      }
      expect(calls).to.be.greaterThan(1);
      const err = await client.check({ service: "unknown" }).catch((e: unknown) => e);
      expect(ConnectError.from(err).code).to.equal(Code.NotFound);
      // Both connections are still up: the pings cost no connection.
      expect(transport.paths()).to.equal(2);
    });
  });

  describe("a plain grpc-js client with keepalive pings against our gRPC server", () => {
    let server: RunningServer;
    let client: grpc.Client & Record<string, (...args: unknown[]) => unknown>;

    before(async () => {
      server = await startGrpcServer(
        [served(Health, new HealthServiceImpl({ "railgate.test.v1.Probe": {} }))],
        0,
      );
      const { Client } = healthDefinition();
      client = new Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), {
        "grpc.keepalive_time_ms": 50,
        "grpc.keepalive_timeout_ms": 2_000,
        "grpc.keepalive_permit_without_calls": 1,
      });
    });

    after(async () => {
      client?.close();
      await server?.close();
    });

    const check = (service: string) =>
      new Promise<{ status: string }>((resolve, reject) =>
        (client.check as (r: unknown, cb: (e: unknown, r: { status: string }) => void) => void)(
          { service },
          (err, res) => (err ? reject(err) : resolve(res)),
        ),
      );

    it(`answers the ${LIVENESS_SERVICE} service name SERVING, and keeps the connection through the pings`, async () => {
      expect((await check(LIVENESS_SERVICE)).status).to.equal("SERVING");
      // Idle and pinged for a while: the channel stays READY (no GOAWAY, no reset).
      await sleep(500);
      expect(client.getChannel().getConnectivityState(false)).to.equal(
        grpc.connectivityState.READY,
      );
      expect((await check("railgate.test.v1.Probe")).status).to.equal("SERVING");
    });
  });
});
