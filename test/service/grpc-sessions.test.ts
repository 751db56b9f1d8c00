import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { errorReply } from "../../gateway/http-error.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import {
  GRPC_MAX_MESSAGE_BYTES,
  MAX_ERROR_MESSAGE_CHARS,
  type RunningServer,
  startGrpcServer,
} from "../../services/common/grpc-server.js";
import { GrpcSessionManager } from "../../services/common/grpc-session-manager.js";
import { served } from "../../services/common/in-process-transport.js";

/**
 * A bare HTTP/2 server with one AccountService method: the workspace it
 * "creates" echoes the first characters of the name, or fails with a message
 * of `fail` characters. `readMaxBytes` is small so a test can exceed it cheaply.
 */
async function startEchoServer(readMaxBytes = 1024 * 1024) {
  const server = http2.createServer(
    connectNodeAdapter({
      readMaxBytes,
      routes: (router) =>
        router.service(AccountService, {
          async createWorkspace(req) {
            if (req.slug === "fail") throw new ConnectError("x".repeat(70_000));
            return { workspace: { id: "w", name: req.name.slice(0, 16) } };
          },
        }),
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  let opened = 0;
  server.on("session", () => opened++);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sessions,
    opened: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type Echo = Awaited<ReturnType<typeof startEchoServer>>;

function clientOf(manager: GrpcSessionManager, baseUrl: string): Client<typeof AccountService> {
  return createClient(AccountService, createGrpcTransport({ baseUrl, sessionManager: manager }));
}

describe("internal gRPC sessions", () => {
  let server: Echo;
  let manager: GrpcSessionManager;
  beforeEach(async () => {
    server = await startEchoServer();
    manager = new GrpcSessionManager(server.url);
  });
  afterEach(async () => {
    manager.close();
    await server.close();
  });

  it("survives a GOAWAY on an idle session followed at once by a request (no unhandled 'error')", async () => {
    // connect-node's Http2SessionManager crashes the process here
    // (connectrpc/connect-es#1768): the request replaces the session and drops
    // its error listener before Node emits the deferred GOAWAY error.
    const client = clientOf(manager, server.url);
    await client.createWorkspace({ name: "first" });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener("uncaughtException", onUncaught);
    try {
      // The client's side of the session, through the manager's public request().
      const probe = await manager.request("GET", "/probe", {}, {});
      const clientSession = probe.session;
      await new Promise<void>((resolve) => probe.close(http2.constants.NGHTTP2_CANCEL, resolve));
      const next = new Promise<string>((resolve, reject) => {
        const [serverSession] = server.sessions;
        // The request is made in the very tick the client sees the GOAWAY.
        clientSession?.once("goaway", () => {
          client
            .createWorkspace({ name: "second" })
            .then((r) => resolve(r.workspace?.name ?? ""), reject);
        });
        serverSession?.close();
      });
      expect(await next).to.equal("second");
      // Let any deferred error surface before looking.
      await new Promise((r) => setTimeout(r, 50));
      expect(uncaught).to.deep.equal([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("replaces a session the peer poisoned: the next requests succeed on a fresh one", async () => {
    const client = clientOf(manager, server.url);
    const other = clientOf(manager, server.url);
    await client.createWorkspace({ name: "before" });
    expect(server.opened()).to.equal(1);
    // 12 MB past a 1 MiB readMaxBytes: the server stops reading, and its session
    // then refuses every new stream (ENHANCE_YOUR_CALM) for as long as it lives.
    const poison = await client.createWorkspace({ name: "p".repeat(12_000_000) }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(poison).to.be.instanceOf(ConnectError);
    // Another tenant's requests right after: all served.
    for (let i = 0; i < 5; i++) {
      const res = await other.createWorkspace({ name: `after ${i}` });
      expect(res.workspace?.name).to.equal(`after ${i}`);
    }
    expect(server.opened(), "a fresh session was opened").to.equal(2);
  });

  it("refuses a message over writeMaxBytes locally, before it reaches the session (413 at the gateway)", async () => {
    const client = createClient(
      AccountService,
      createGrpcTransport({
        baseUrl: server.url,
        sessionManager: manager,
        writeMaxBytes: 64 * 1024,
      }),
    );
    const err = await client.createWorkspace({ name: "p".repeat(100_000) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConnectError);
    expect(errorReply(err).status).to.equal(413);
    expect((await client.createWorkspace({ name: "fine" })).workspace?.name).to.equal("fine");
    expect(server.opened()).to.equal(1);
    expect(GRPC_MAX_MESSAGE_BYTES).to.equal(32 * 1024 * 1024);
  });

  it("replaces a session after a reply header too large for HTTP/2, and keeps serving", async () => {
    const client = clientOf(manager, server.url);
    const err = await client.createWorkspace({ name: "x", slug: "fail" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConnectError);
    for (let i = 0; i < 3; i++) {
      expect((await client.createWorkspace({ name: `ok ${i}` })).workspace?.name).to.equal(
        `ok ${i}`,
      );
    }
  });
});

describe("gRPC error interceptor", () => {
  let server: RunningServer;
  let manager: GrpcSessionManager;
  before(async () => {
    server = await startGrpcServer(
      [
        served(AccountService, {
          async createWorkspace(req) {
            throw new ConnectError(`name ${req.name} is not allowed`, Code.InvalidArgument);
          },
        }),
      ],
      0,
    );
    manager = new GrpcSessionManager(`http://127.0.0.1:${server.port}`);
  });
  after(async () => {
    manager.close();
    await server.close();
  });

  it(`cuts any error message to ${MAX_ERROR_MESSAGE_CHARS} characters, keeping its code`, async () => {
    const client = clientOf(manager, `http://127.0.0.1:${server.port}`);
    for (let i = 0; i < 3; i++) {
      const err = await client.createWorkspace({ name: "n".repeat(70_000) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ConnectError);
      const ce = err as ConnectError;
      expect(ce.code).to.equal(Code.InvalidArgument);
      expect(ce.rawMessage.length).to.equal(MAX_ERROR_MESSAGE_CHARS);
      expect(ce.rawMessage).to.match(/^name n+…$/);
    }
    expect(manager.openSessions).to.equal(1);
  });
});
