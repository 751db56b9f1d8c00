import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { expect } from "chai";
import { createGrpcJsTransport } from "../../bench/grpc-js-transport.js";
import { errorReply } from "../../gateway/http-error.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import {
  GRPC_MAX_MESSAGE_BYTES,
  MAX_ERROR_MESSAGE_CHARS,
  type RunningServer,
  startGrpcServer,
} from "../../platform/rpc/grpc-server.js";
import { createHttp2GrpcTransport } from "../../platform/rpc/http2-grpc-transport.js";
import { served } from "../../platform/rpc/in-process-transport.js";

/**
 * A bare HTTP/2 server with one AccountService method: the workspace it
 * "creates" echoes the first characters of the name, or fails with a message
 * of `fail` characters. `readMaxBytes` is small so a test can exceed it cheaply.
 */
/** Why each "hang" handler's signal aborted (the server side of a cancelled call). */
const handlerAborts: unknown[] = [];
const handlerStarts = { count: 0 };

async function startEchoServer(readMaxBytes = 1024 * 1024) {
  const server = http2.createServer(
    connectNodeAdapter({
      readMaxBytes,
      routes: (router) =>
        router.service(AccountService, {
          async createWorkspace(req, ctx) {
            if (req.slug === "fail") throw new ConnectError("x".repeat(70_000));
            if (req.slug === "hang") {
              // Answers only once the call is cancelled or its deadline passes.
              handlerStarts.count++;
              await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
              handlerAborts.push(ctx.signal.reason);
              throw new ConnectError("gave up", Code.Internal);
            }
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

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

type Echo = Awaited<ReturnType<typeof startEchoServer>>;

/**
 * The gateway's transport to a service in another process (gateway/clients.ts), and the
 * grpc-js one it replaced (kept to compare in bench/grpc-hop.ts): both pass every test here.
 * One connection per address, as a grpc-js channel has, so connection counts compare.
 */
const TRANSPORTS = [
  [
    "node:http2",
    (o: { baseUrl: string; maxMessageBytes: number; defaultUnaryTimeoutMs?: number }) =>
      createHttp2GrpcTransport({ ...o, pool: { connectionsPerAddress: 1 } }),
  ],
  ["grpc-js", createGrpcJsTransport],
] as const;

for (const [transportName, createTransport] of TRANSPORTS) {
  function transportTo(baseUrl: string, maxMessageBytes = GRPC_MAX_MESSAGE_BYTES) {
    return createTransport({ baseUrl, maxMessageBytes });
  }

  describe(`internal gRPC connections (the ${transportName} transport)`, () => {
    let server: Echo;
    let transport: ReturnType<typeof transportTo>;
    let client: Client<typeof AccountService>;
    beforeEach(async () => {
      server = await startEchoServer();
      transport = transportTo(server.url);
      client = createClient(AccountService, transport);
    });
    afterEach(async () => {
      transport.close();
      await server.close();
    });

    it("survives a GOAWAY on an idle connection followed at once by a request (no unhandled 'error')", async () => {
      // connect-node's Http2SessionManager crashed the process here
      // (connectrpc/connect-es#1768).
      await client.createWorkspace({ name: "first" });
      const uncaught: unknown[] = [];
      const onUncaught = (err: unknown) => uncaught.push(err);
      process.prependListener("uncaughtException", onUncaught);
      try {
        for (const s of server.sessions) s.close();
        expect((await client.createWorkspace({ name: "second" })).workspace?.name).to.equal(
          "second",
        );
        // Let any deferred error surface before looking.
        await new Promise((r) => setTimeout(r, 50));
        expect(uncaught).to.deep.equal([]);
        expect(server.opened(), "the request went to a fresh connection").to.equal(2);
      } finally {
        process.off("uncaughtException", onUncaught);
      }
    });

    it("keeps serving other tenants after a message the peer refuses as too large", async () => {
      const other = createClient(AccountService, transport);
      await client.createWorkspace({ name: "before" });
      // 12 MB past the peer's 1 MiB limit.
      const poison = await client.createWorkspace({ name: "p".repeat(12_000_000) }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(poison).to.be.instanceOf(ConnectError);
      for (let i = 0; i < 5; i++) {
        const res = await other.createWorkspace({ name: `after ${i}` });
        expect(res.workspace?.name).to.equal(`after ${i}`);
      }
    });

    it("refuses a message over its limit locally, before it reaches the connection (413 at the gateway)", async () => {
      const small = transportTo(server.url, 64 * 1024);
      try {
        const c = createClient(AccountService, small);
        const err = await c.createWorkspace({ name: "p".repeat(100_000) }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(ConnectError);
        expect(errorReply(err).status).to.equal(413);
        expect((await c.createWorkspace({ name: "fine" })).workspace?.name).to.equal("fine");
        expect(server.opened()).to.equal(1);
        expect(GRPC_MAX_MESSAGE_BYTES).to.equal(32 * 1024 * 1024);
      } finally {
        small.close();
      }
    });

    it("gives a unary call without a deadline the transport's default: 524 at the gateway, the handler cancelled", async () => {
      handlerAborts.length = 0;
      const bounded = createTransport({
        baseUrl: server.url,
        maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
        defaultUnaryTimeoutMs: 200,
      });
      try {
        const err = await createClient(AccountService, bounded)
          .createWorkspace({ name: "x", slug: "hang" })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(err).to.be.instanceOf(ConnectError);
        expect((err as ConnectError).code).to.equal(Code.DeadlineExceeded);
        expect(errorReply(err).status).to.equal(524);
        await waitFor(() => handlerAborts.length === 1);
        // The server's own timer (from grpc-timeout) and the client's reset of the stream race:
        // whichever lands first names the reason; either way the handler was stopped.
        expect([Code.DeadlineExceeded, Code.Canceled]).to.include(
          ConnectError.from(handlerAborts[0]).code,
        );
      } finally {
        bounded.close();
      }
    });

    it("cancels the call on the server when the caller's signal aborts", async () => {
      handlerAborts.length = 0;
      handlerStarts.count = 0;
      const ac = new AbortController();
      const pending = client
        .createWorkspace({ name: "x", slug: "hang" }, { signal: ac.signal })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      // Aborted only once the handler is running.
      await waitFor(() => handlerStarts.count === 1);
      ac.abort();
      const err = await pending;
      expect((err as ConnectError).code).to.equal(Code.Canceled);
      await waitFor(() => handlerAborts.length === 1);
      expect(ConnectError.from(handlerAborts[0]).code).to.equal(Code.Canceled);
    });

    it("keeps serving after a reply header too large for HTTP/2", async () => {
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

  describe(`gRPC error interceptor (the ${transportName} transport)`, () => {
    let server: RunningServer;
    let transport: ReturnType<typeof transportTo>;
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
      transport = transportTo(`http://127.0.0.1:${server.port}`);
    });
    after(async () => {
      transport.close();
      await server.close();
    });

    it(`cuts any error message to ${MAX_ERROR_MESSAGE_CHARS} characters, keeping its code`, async () => {
      const client = createClient(AccountService, transport);
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
    });

    it("hands the gateway the message exactly as the service wrote it (reserved characters and all)", async () => {
      const client = createClient(AccountService, transport);
      const name = "acme/tts-1: a, b; c?d@e&f=g+h$i#j %41 …";
      const err = await client.createWorkspace({ name }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as ConnectError).rawMessage).to.equal(`name ${name} is not allowed`);
    });
  });
}
