import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import {
  type Client,
  Code,
  ConnectError,
  createClient,
  createContextValues,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { expect } from "chai";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import type { Http2PoolOptions } from "../../platform/rpc/http2-grpc-pool.js";
import {
  createHttp2GrpcTransport,
  type Http2GrpcTransport,
  ON_CONNECTION,
} from "../../platform/rpc/http2-grpc-transport.js";
import { pollUntil } from "../kit/poll.js";
import { TcpBalancer } from "../kit/tcp-balancer.js";

/** An HTTP/2 gRPC server whose CreateWorkspace answers with its own name (which replica served). */
async function replica(name: string, port = 0) {
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(AccountService, {
          async createWorkspace() {
            return { workspace: { id: "w", name } };
          },
        }),
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Short enough for a quick test; the defaults (10 s, 5 s, 5 s) are the same code path. */
const FAST: Http2PoolOptions = {
  pingIntervalMs: 300,
  pingTimeoutMs: 300,
  connectTimeoutMs: 300,
  connectionsPerAddress: 2,
};

/** Which replica answered a call, or the code it failed with. */
async function served(client: Client<typeof AccountService>, timeoutMs = 5_000) {
  try {
    return (await client.createWorkspace({ name: "x" }, { timeoutMs })).workspace?.name;
  } catch (err) {
    return Code[ConnectError.from(err).code];
  }
}

describe("the gateway's gRPC client: connections per target, keepalive, a frozen replica", () => {
  let a: Awaited<ReturnType<typeof replica>>;
  let b: Awaited<ReturnType<typeof replica>>;
  let balancer: TcpBalancer;
  let transport: Http2GrpcTransport | undefined;

  beforeEach(async () => {
    a = await replica("a");
    b = await replica("b");
    // One address in front of both, as a Kubernetes Service's ClusterIP.
    balancer = await TcpBalancer.start([a.port, b.port]);
  });

  afterEach(async () => {
    transport?.close();
    transport = undefined;
    await balancer.close();
    await a.close();
    await b.close();
  });

  function clientOf(url: string, pool: Partial<Http2PoolOptions> = FAST) {
    transport = createHttp2GrpcTransport({ baseUrl: url, maxMessageBytes: 1 << 20, pool });
    return createClient(AccountService, transport);
  }

  it("spreads calls over two connections through one balancer address: both replicas serve", async () => {
    const client = clientOf(balancer.url);
    const answers = new Set<string | undefined>();
    for (let i = 0; i < 20; i++) answers.add(await served(client));
    expect([...answers].sort()).to.deep.equal(["a", "b"]);
    expect(transport?.paths()).to.equal(2);
  });

  it("drops a connection whose replica froze once its ping goes unanswered: its call fails Unavailable, the next ones go to the live replica", async () => {
    const client = clientOf(balancer.url);
    for (let i = 0; i < 4; i++) await served(client);
    balancer.freeze(b.port);
    // Calls that land on the frozen replica hang until the keepalive ping times out.
    const during = await Promise.all(Array.from({ length: 4 }, () => served(client, 10_000)));
    expect(
      during.every((s) => s === "a" || s === "Unavailable"),
      during.join(),
    ).to.equal(true);
    expect(during).to.include("Unavailable");
    // The pool dials again; through the balancer it may reach the frozen replica, whose
    // connection never becomes ready (connect timeout): calls keep to the live one.
    const after: (string | undefined)[] = [];
    for (let i = 0; i < 30; i++) after.push(await served(client));
    expect(
      after.every((s) => s === "a"),
      after.join(),
    ).to.equal(true);
  });

  it("leaves a replica that accepts connections but never speaks HTTP/2 (connect timeout): no call fails", async () => {
    balancer.freeze(b.port);
    const client = clientOf(balancer.url);
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) answers.push(await served(client));
    expect(
      answers.every((s) => s === "a"),
      answers.join(),
    ).to.equal(true);
  });

  it("probes the connection of a call that passed its deadline, long before the next keepalive tick", async () => {
    const client = clientOf(balancer.url, { ...FAST, pingIntervalMs: 600_000 });
    for (let i = 0; i < 4; i++) await served(client);
    balancer.freeze(b.port);
    const first = await Promise.all([served(client, 200), served(client, 200)]);
    expect(first.sort()).to.deep.equal(["DeadlineExceeded", "a"]);
    // The probe's ping is unanswered 300 ms later: the frozen connection is gone.
    expect(
      await pollUntil(
        async () => transport?.paths(),
        (n) => n === 1,
      ),
    ).to.equal(1);
    const after: (string | undefined)[] = [];
    for (let i = 0; i < 10; i++) after.push(await served(client, 200));
    expect(
      after.every((s) => s === "a"),
      after.join(),
    ).to.equal(true);
  });

  it("asks the n-th ready connection when a call names it (ON_CONNECTION): a health check reaches each replica", async () => {
    const client = clientOf(balancer.url);
    await served(client);
    expect(
      await pollUntil(
        async () => transport?.paths(),
        (n) => n === 2,
      ),
    ).to.equal(2);
    const on = async (i: number) =>
      (
        await client.createWorkspace(
          { name: "x" },
          { contextValues: createContextValues().set(ON_CONNECTION, i) },
        )
      ).workspace?.name;
    const pinned = [await on(0), await on(1), await on(0), await on(1)];
    expect(pinned[0]).to.not.equal(pinned[1]);
    expect(pinned[2]).to.equal(pinned[0]);
    expect(pinned[3]).to.equal(pinned[1]);
  });

  it("fails calls Unavailable at once while a lone replica is down, and serves the first call once it is back", async () => {
    const client = clientOf(`http://127.0.0.1:${b.port}`);
    expect(await served(client)).to.equal("b");
    await b.close();
    const failed = await Promise.all(Array.from({ length: 5 }, () => served(client)));
    expect(failed, failed.join()).to.deep.equal(Array(5).fill("Unavailable"));
    // Back on the same port: the next call dials it, backoff or not.
    b = await replica("b again", b.port);
    expect(await served(client)).to.equal("b again");
  });

  it("resolves a host name and reaches the service at its address(es)", async () => {
    const client = clientOf(`http://localhost:${a.port}`);
    // localhost may resolve to ::1 too, where nothing listens: those connections fail and
    // calls keep to the ones that are ready.
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 10; i++) answers.push(await served(client));
    expect(
      answers.every((s) => s === "a"),
      answers.join(),
    ).to.equal(true);
  });
});
