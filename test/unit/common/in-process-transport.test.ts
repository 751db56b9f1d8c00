import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { expect } from "chai";
import { ApiKeySchema } from "../../../gen/railgate/account/v1/account_pb.js";
import { AccountService } from "../../../gen/railgate/account/v1/account_service_pb.js";
import { errorInterceptor } from "../../../platform/rpc/grpc-server.js";
import {
  createInProcessTransport,
  type ServiceRegistration,
  served,
} from "../../../platform/rpc/in-process-transport.js";

async function codeOf(p: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

/**
 * The co-located transport behaves as the wire does: interceptors on both
 * sides, headers and trailers, deadlines, cancellation, errors; and a side
 * that writes to a message it received (they cross by reference) is caught.
 */
describe("in-process transport", () => {
  const events: string[] = [];
  let streamSignal: AbortSignal | undefined;
  const key = create(ApiKeySchema, { hash: "a".repeat(64), name: "shared" });

  const impl = served(AccountService, {
    async authenticate(_req, ctx) {
      events.push(`header:${ctx.requestHeader.get("x-probe")}`);
      ctx.responseHeader.set("x-answer", "42");
      ctx.responseTrailer.set("x-trailer", "done");
      return { key };
    },
    async getKey(req, ctx) {
      if (req.hash === "hang") {
        // Ignores its signal on purpose: the deadline must still end the call.
        await new Promise((r) => setTimeout(r, 10_000).unref());
      }
      if (req.hash === "mutate") req.hash = "changed";
      if (req.hash === "boom") throw new Error("internal detail that must not leak");
      if (req.hash === "denied") throw new ConnectError("no", Code.PermissionDenied);
      events.push(`deadline:${ctx.timeoutMs() !== undefined}`);
      return { key };
    },
    async *watchInvalidations(_req, ctx) {
      streamSignal = ctx.signal;
      try {
        for (let i = 0; ; i++) {
          yield { scope: `s${i}` };
          await new Promise((r) => setTimeout(r, 5));
          if (ctx.signal.aborted) return;
        }
      } finally {
        events.push("stream-finally");
      }
    },
  });

  const serverSide: Interceptor = (next) => async (req) => {
    events.push(`server-interceptor:${req.method.name}`);
    return next(req);
  };
  const clientSide: Interceptor = (next) => async (req) => {
    req.header.set("x-probe", "from-client-interceptor");
    return next(req);
  };

  function client(services: ServiceRegistration[] = [impl], freezeMessages = true) {
    return createClient(
      AccountService,
      createInProcessTransport({
        services,
        serverInterceptors: [errorInterceptor, serverSide],
        clientInterceptors: [clientSide],
        freezeMessages,
      }),
    );
  }

  /** Waits (bounded) for the handler to record an event; fails if it never does. */
  async function untilEvent(name: string) {
    for (let i = 0; i < 100 && !events.includes(name); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(events).to.include(name);
  }

  beforeEach(() => {
    events.length = 0;
  });

  it("runs both sides' interceptors and carries headers and trailers", async () => {
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const res = await client().authenticate(
      {},
      { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) },
    );
    expect(res.key?.name).to.equal("shared");
    expect(events).to.deep.equal([
      "server-interceptor:Authenticate",
      "header:from-client-interceptor",
    ]);
    expect(header?.get("x-answer")).to.equal("42");
    expect(trailer?.get("x-trailer")).to.equal("done");
  });

  it("passes messages by reference, frozen: a write by the receiver throws (and is hidden as Internal)", async () => {
    const res = await client().getKey({ hash: "x" });
    expect(res.key).to.equal(key);
    expect(Object.isFrozen(res.key)).to.equal(true);
    expect(() => {
      (res.key as { name: string }).name = "changed by the caller";
    }).to.throw(TypeError);
    expect(await codeOf(client().getKey({ hash: "mutate" }))).to.equal(Code.Internal);
  });

  it("hides unexpected errors and keeps deliberate ones", async () => {
    let err: ConnectError | undefined;
    try {
      await client().getKey({ hash: "boom" });
    } catch (e) {
      err = ConnectError.from(e);
    }
    expect(err?.code).to.equal(Code.Internal);
    expect(err?.rawMessage).to.equal("Internal server error");
    expect(await codeOf(client().getKey({ hash: "denied" }))).to.equal(Code.PermissionDenied);
  });

  it("ends a call at its deadline even when the handler ignores its signal", async () => {
    expect(await codeOf(client().getKey({ hash: "hang" }, { timeoutMs: 30 }))).to.equal(
      Code.DeadlineExceeded,
    );
    await client().getKey({ hash: "x" }, { timeoutMs: 5000 });
    expect(events).to.include("deadline:true");
  });

  it("cancels a server stream when the caller aborts, and runs the handler's finally", async () => {
    const abort = new AbortController();
    const seen: string[] = [];
    const code = await codeOf(
      (async () => {
        for await (const m of client().watchInvalidations({}, { signal: abort.signal })) {
          seen.push(m.scope);
          if (seen.length === 3) abort.abort();
        }
      })(),
    );
    expect(code).to.equal(Code.Canceled);
    expect(seen).to.deep.equal(["s0", "s1", "s2"]);
    await untilEvent("stream-finally");
  });

  it("gives a stream's handler the caller's abort, with the caller's own reason", async () => {
    // One AbortController per request reaches the handler: no linked controller, no
    // DOMException of the transport's own when the stream ends.
    const abort = new AbortController();
    const reason = new Error("the client went away");
    let err: unknown;
    try {
      for await (const _ of client().watchInvalidations({}, { signal: abort.signal })) {
        abort.abort(reason);
      }
    } catch (e) {
      err = e;
    }
    expect(ConnectError.from(err).code).to.equal(Code.Canceled);
    expect((err as ConnectError).cause).to.equal(reason);
    await untilEvent("stream-finally");
    expect(streamSignal?.reason).to.equal(reason);
  });

  it("returns a stream's handler (its finally runs) when the caller stops reading", async () => {
    const transport = createInProcessTransport({
      services: [impl],
      serverInterceptors: [errorInterceptor, serverSide],
    });
    const res = await transport.stream(
      AccountService.method.watchInvalidations,
      undefined,
      undefined,
      undefined,
      (async function* () {
        yield {};
      })(),
    );
    const seen: string[] = [];
    for await (const m of res.message) {
      seen.push((m as { scope: string }).scope);
      if (seen.length === 2) break;
    }
    expect(seen).to.deep.equal(["s0", "s1"]);
    // Returned, not aborted: the caller's signal is untouched, the generator ended.
    expect(events).to.include("stream-finally");
    expect(streamSignal?.aborted).to.equal(false);
  });

  it("answers Unimplemented for a method of a service it does not serve", async () => {
    expect(await codeOf(client([]).authenticate({}))).to.equal(Code.Unimplemented);
  });
});
