import { connect, type Socket } from "node:net";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { loadConfig } from "../../platform/config/config.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const CAP = 3;

/** A raw keep-alive connection whose received text the test reads as it arrives. */
class Conn {
  readonly socket: Socket;
  private text = "";
  private waiters: (() => void)[] = [];
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.setEncoding("utf8");
    this.socket.on("error", () => {});
    this.socket.on("data", (d: string) => {
      this.text += d;
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) =>
      this.socket.on("close", () => {
        for (const w of this.waiters.splice(0)) w();
        resolve();
      }),
    );
  }

  get open(): boolean {
    return !this.socket.destroyed;
  }

  /** Resolves true once `count` answers starting with `prefix` arrived, false if closed first. */
  async answered(prefix: string, count = 1): Promise<boolean> {
    for (;;) {
      if (this.text.split(prefix).length - 1 >= count) return true;
      if (!this.open) return false;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** One request answered in full, then the connection idles (keep-alive). */
  async idle(n = 1): Promise<boolean> {
    this.socket.write("GET /healthz HTTP/1.1\r\nHost: railgate\r\n\r\n");
    return this.answered("HTTP/1.1 200", n);
  }

  /**
   * A request in flight: a body announced and never sent. The 100 Continue the server sends
   * before handling the request says it is in flight there.
   */
  async busy(n = 1): Promise<boolean> {
    this.socket.write(
      "POST /api/v1/keys HTTP/1.1\r\nHost: railgate\r\nContent-Type: application/json\r\n" +
        `Authorization: Bearer ${MANAGEMENT_KEY}\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n{`,
    );
    return this.answered("HTTP/1.1 100", n);
  }
}

/**
 * A system whose listeners have these caps, for the enclosing describe; returns a function
 * that opens a raw connection to it (closed, with the system, after the suite).
 */
function gatewayWithCaps(caps: { maxConnections: number; maxConnectionsPerAddress: number }) {
  let redis: LaneStore;
  let system: RunningSystem;
  const conns: Conn[] = [];
  before(async () => {
    redis = await startLaneStore();
    system = await startTestSystem(redis.url, { http: { ...loadConfig({}).http, ...caps } });
  });
  after(async () => {
    for (const c of conns) c.socket.destroy();
    await system?.close();
    await redis?.stop();
  });
  return () => {
    const c = new Conn(system.gatewayPorts.global);
    conns.push(c);
    return c;
  };
}

/**
 * The listener's connection cap closes the connection idle the longest for a newcomer, never
 * one with a request in flight; and a newcomer only when every connection is busy.
 */
describe("gateway: connection cap, idle connections first", () => {
  const open = gatewayWithCaps({ maxConnections: CAP, maxConnectionsPerAddress: 0 });

  it("closes the longest idle for a new connection, never a busy one; refuses when all are busy", async () => {
    const a = open();
    expect(await a.idle()).to.equal(true);
    const b = open();
    expect(await b.idle()).to.equal(true);
    const c = open();
    expect(await c.busy()).to.equal(true);
    // At the cap: the newcomer is served, and `a` (idle the longest) makes room.
    const d = open();
    expect(await d.idle()).to.equal(true);
    await a.closed;
    expect([b.open, c.open]).to.deep.equal([true, true]);
    // Then `b`: `d` went idle after it.
    const e = open();
    expect(await e.idle()).to.equal(true);
    await b.closed;
    expect([c.open, d.open]).to.deep.equal([true, true]);
    // Every open connection busy: a newcomer is closed without an answer, the others stay.
    expect(await d.busy()).to.equal(true);
    expect(await e.busy()).to.equal(true);
    const f = open();
    expect(await f.idle()).to.equal(false);
    expect([c.open, d.open, e.open]).to.deep.equal([true, true, true]);
  });
});

/** The per-address cap applies the same rule within one address: its own idle ones make room. */
describe("gateway: per-address cap, the address's idle connections first", () => {
  const open = gatewayWithCaps({ maxConnections: 100, maxConnectionsPerAddress: CAP });

  it("closes the address's longest idle for its newcomer; refuses when all of its connections are busy", async () => {
    const a = open();
    expect(await a.idle()).to.equal(true);
    const b = open();
    expect(await b.busy()).to.equal(true);
    const c = open();
    expect(await c.busy()).to.equal(true);
    // The address at its cap: its idle `a` makes room, the busy ones stay.
    const d = open();
    expect(await d.idle()).to.equal(true);
    await a.closed;
    expect([b.open, c.open]).to.deep.equal([true, true]);
    // Every connection of the address busy: its newcomer is closed without an answer.
    expect(await d.busy()).to.equal(true);
    const e = open();
    expect(await e.idle()).to.equal(false);
    expect([b.open, c.open, d.open]).to.deep.equal([true, true, true]);
  });
});
