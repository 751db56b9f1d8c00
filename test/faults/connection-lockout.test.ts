import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { expect } from "chai";
import { pollUntil, sleep } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SystemProcess, startSystemProcess } from "../kit/system-process.js";

/** Where the fresh client comes from: an address of its own (all of 127/8 is loopback). */
const FRESH_ADDRESS = "127.0.0.2";

/** The share of fresh requests that must be served. */
const SERVED_SHARE = 0.99;

/**
 * One fresh request on a new connection from `localAddress`: true when `/healthz` answered 200
 * within `withinMs` (a refused, reset or late one is not served).
 */
function freshRequest(port: number, localAddress: string, withinMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/healthz",
        localAddress,
        agent: false,
        headers: { connection: "close" },
        timeout: withinMs,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode === 200));
        res.on("error", () => resolve(false));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      resolve(false);
    }, withinMs);
    req.on("close", () => clearTimeout(timer));
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** `total` fresh requests, `parallel` at a time; resolves with how many were served. */
async function freshRequests(
  port: number,
  total: number,
  parallel: number,
  withinMs: number,
): Promise<number> {
  let served = 0;
  for (let sent = 0; sent < total; sent += parallel) {
    const wave = Array.from({ length: Math.min(parallel, total - sent) }, () =>
      freshRequest(port, FRESH_ADDRESS, withinMs),
    );
    served += (await Promise.all(wave)).filter(Boolean).length;
  }
  return served;
}

/**
 * A keep-alive connection from `localAddress` that sends one request, reads the answer and then
 * idles: the lockout attack. Resolves once answered (false if refused or closed first).
 */
function idleAfterOneRequest(
  port: number,
  localAddress: string,
  sockets: Socket[],
): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: "127.0.0.1", localAddress });
    sockets.push(s);
    s.setEncoding("utf8");
    s.on("error", () => resolve(false));
    s.on("close", () => resolve(false));
    s.on("connect", () => s.write("GET /healthz HTTP/1.1\r\nHost: railgate\r\n\r\n"));
    s.once("data", (d: string) => resolve(d.startsWith("HTTP/1.1 200")));
  });
}

const stillOpen = (sockets: Socket[]) => sockets.filter((s) => !s.destroyed).length;

/**
 * The gateway's connection caps, on a real gateway process over real sockets: one client can
 * no longer lock everyone else out of a listener, with idle keep-alive connections nor with a
 * burst of sockets. The fresh client comes from an address of its own.
 */
describe("faults: one client cannot lock others out of a listener", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let system: SystemProcess | undefined;
  const sockets: Socket[] = [];

  before(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    sockets.length = 0;
    await system?.child.stop(5_000);
    system = undefined;
  });
  after(async () => {
    await redis?.stop();
  });

  it("serves >= 99% of fresh requests while one address holds 1,000 idle keep-alive connections", async () => {
    const ATTACK = 1_000;
    const FRESH = 200;
    system = await startSystemProcess(redis.url, {
      RAILGATE_HTTP_MAX_CONNECTIONS: String(ATTACK),
      // Behind a load balancer every client shares its address and the per-address cap is off:
      // the idle-first eviction alone must keep the listener serving.
      RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: "0",
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    const port = system.ports.global;
    let answered = 0;
    // A hundred at a time: the kernel's accept queue would drop a thousand handshakes at once.
    for (let opened = 0; opened < ATTACK; opened += 100) {
      const wave = Array.from({ length: 100 }, () =>
        idleAfterOneRequest(port, "127.0.0.1", sockets),
      );
      answered += (await Promise.all(wave)).filter(Boolean).length;
    }
    // The attacker now holds the whole listener with idle keep-alive connections.
    await sleep(500);
    const held = stillOpen(sockets);
    const served = await freshRequests(port, FRESH, 10, 10_000);
    console.log(
      `      fresh requests served while ${held} idle connections were held: ${served}/${FRESH}` +
        ` (attacker connections left open after: ${stillOpen(sockets)})`,
    );
    expect(served).to.be.at.least(Math.ceil(FRESH * SERVED_SHARE));
    expect(answered, "the attacker's requests answered").to.equal(ATTACK);
    expect(held, "attacker connections held").to.equal(ATTACK);
  });

  it("serves >= 99% of fresh requests within 1 s after a 20,000-socket burst", async () => {
    const BURST = 20_000;
    const ADDRESSES = 20;
    const PER_ADDRESS = 100;
    const CAP = 500;
    const FRESH = 100;
    // The test process may hold 20,000 descriptors (ulimit -n): the burst never has more than
    // this many sockets open at once (those the gateway refused are closed as they go).
    const MAX_OPEN = 15_000;
    system = await startSystemProcess(redis.url, {
      RAILGATE_HTTP_MAX_CONNECTIONS: String(CAP),
      RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    const port = system.ports.global;
    const byAddress = new Map<string, Socket[]>();
    let open = 0;
    let settled = 0;
    let freed: (() => void) | undefined;
    for (let i = 0; i < BURST; i++) {
      while (open >= MAX_OPEN) await new Promise<void>((r) => (freed = r));
      // 20 addresses (127.0.1.1 to 127.0.1.20) of 1,000 silent sockets each: each address is
      // held to its cap, and together they fill the listener's.
      const address = `127.0.1.${(i % ADDRESSES) + 1}`;
      const s = connect({ port, host: "127.0.0.1", localAddress: address });
      sockets.push(s);
      const ofAddress = byAddress.get(address) ?? [];
      ofAddress.push(s);
      byAddress.set(address, ofAddress);
      open++;
      let counted = false;
      const settle = () => {
        if (counted) return;
        counted = true;
        settled++;
      };
      s.on("connect", settle);
      s.on("error", settle);
      s.on("close", () => {
        settle();
        open--;
        s.destroy();
        freed?.();
      });
      if (i % 1_000 === 999) await new Promise((r) => setImmediate(r));
    }
    while (settled < BURST) await sleep(10);
    // The burst is over: each fresh request must be answered within 1 s of being sent.
    const started = Date.now();
    const served = await freshRequests(port, FRESH, 20, 1_000);
    // (A burst socket whose handshake the full accept queue dropped believes it is open: the
    // count below includes those, so it is reported, not asserted.)
    console.log(
      `      fresh requests served within 1 s after a ${BURST}-socket burst: ${served}/${FRESH}` +
        ` in ${Date.now() - started} ms (burst sockets open as the client sees it: ${stillOpen(sockets)})`,
    );
    expect(served).to.be.at.least(Math.ceil(FRESH * SERVED_SHARE));
  });

  it("keeps an address within its cap by closing its own idle connections, and no one else's", async () => {
    const PER_ADDRESS = 20;
    system = await startSystemProcess(redis.url, {
      RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    const port = system.ports.global;
    const held: Socket[] = [];
    const first = await Promise.all(
      Array.from({ length: PER_ADDRESS }, () => idleAfterOneRequest(port, "127.0.0.3", held)),
    );
    expect(first.filter(Boolean)).to.have.length(PER_ADDRESS);
    const over: Socket[] = [];
    const beyond = await Promise.all(
      Array.from({ length: 10 }, () => idleAfterOneRequest(port, "127.0.0.3", over)),
    );
    sockets.push(...held, ...over);
    // Served: the address's connections idle the longest made room for them.
    expect(beyond.filter(Boolean)).to.have.length(10);
    await pollUntil(
      async () => stillOpen(held),
      (n) => n === PER_ADDRESS - 10,
    );
    expect(stillOpen(held) + stillOpen(over)).to.equal(PER_ADDRESS);
    // Another address is served meanwhile.
    expect(await freshRequests(port, 10, 10, 10_000)).to.equal(10);
  });
});
