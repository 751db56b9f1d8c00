import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { componentLogger } from "../platform/observability/logger.js";

const log = componentLogger("gateway");

export interface ConnectionCaps {
  /** Open connections of the listener (RAILGATE_HTTP_MAX_CONNECTIONS). */
  maxConnections: number;
  /** Open connections of one client address (RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS); 0 = no cap. */
  maxConnectionsPerAddress: number;
}

interface Tracked {
  address: string;
  /** Requests received and not yet answered (HTTP/1.1 pipelining can queue several). */
  inFlight: number;
}

/** A refusal is logged at most this often (with the counts since): a flood must not flood the log. */
const LOG_EVERY_MS = 10_000;

/**
 * The connection cap of one listener, in place of node:http's `server.maxConnections`, which
 * closes every new socket once the cap is reached: a client holding the cap with idle
 * keep-alive connections (one request each, then silence, for RAILGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS)
 * locked every other client out. Here, at the cap:
 *
 * - the connection idle the longest (no request in flight: between keep-alive requests, or
 *   connected and not yet through its headers) is closed, and the new one is served;
 * - only when every open connection has a request in flight is the new one closed.
 *
 * And an address at its own cap has its new connections closed at once, so one client never
 * fills the listener; everyone else is untouched. Connections that never finish a request are
 * still answered 408 by node:http's headers time-out.
 */
export class ConnectionGuard {
  private readonly open = new Map<Socket, Tracked>();
  /** The open connections with no request in flight, in the order they went idle. */
  private readonly idle = new Set<Socket>();
  private readonly perAddress = new Map<string, number>();
  private readonly counts = { evicted: 0, refusedFull: 0, refusedPerAddress: 0 };
  private lastLogged = 0;
  private loggedCounts = { ...this.counts };

  constructor(private readonly caps: ConnectionCaps) {}

  /** Takes over the listener's connection accounting (before it listens). */
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.admit(socket));
  }

  /** A request arrived on `res`'s connection: it is busy until the response closes. */
  requestStarted(res: ServerResponse): void {
    const socket = res.socket;
    const tracked = socket && this.open.get(socket);
    if (!socket || !tracked) return;
    tracked.inFlight++;
    this.idle.delete(socket);
    res.once("close", () => {
      tracked.inFlight--;
      // Re-added at the end: the Set's order is the order connections went idle.
      if (tracked.inFlight === 0 && this.open.has(socket)) this.idle.add(socket);
    });
  }

  private admit(socket: Socket): void {
    // Gone before we saw it (reset during the handshake): nothing to count.
    const address = socket.remoteAddress;
    if (address === undefined) {
      socket.destroy();
      return;
    }
    const { maxConnections, maxConnectionsPerAddress } = this.caps;
    const ofAddress = this.perAddress.get(address) ?? 0;
    if (maxConnectionsPerAddress > 0 && ofAddress >= maxConnectionsPerAddress) {
      // The same rule within the address: its connection idle the longest makes room, so a
      // client that keeps connections alive between bursts is not refused by its own idle ones.
      const own = this.longestIdleOf(address);
      if (own === undefined) {
        this.counts.refusedPerAddress++;
        this.refuse(socket);
        return;
      }
      this.counts.evicted++;
      this.forget(own);
      own.destroy();
      this.admit(socket);
      return;
    }
    if (this.open.size >= maxConnections) {
      const longestIdle = this.idle.values().next();
      if (longestIdle.done) {
        this.counts.refusedFull++;
        this.refuse(socket);
        return;
      }
      this.counts.evicted++;
      this.forget(longestIdle.value);
      longestIdle.value.destroy();
    }
    this.open.set(socket, { address, inFlight: 0 });
    this.idle.add(socket);
    this.perAddress.set(address, ofAddress + 1);
    socket.once("close", () => this.forget(socket));
  }

  /** The address's connection idle the longest (a walk of the idle set: only at the cap). */
  private longestIdleOf(address: string): Socket | undefined {
    for (const socket of this.idle) {
      if (this.open.get(socket)?.address === address) return socket;
    }
    return undefined;
  }

  /** Drops a connection from the counts now (an evicted one's 'close' comes a tick later). */
  private forget(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (!tracked) return;
    this.open.delete(socket);
    this.idle.delete(socket);
    const left = (this.perAddress.get(tracked.address) ?? 1) - 1;
    if (left === 0) this.perAddress.delete(tracked.address);
    else this.perAddress.set(tracked.address, left);
  }

  private refuse(socket: Socket): void {
    socket.destroy();
    const now = Date.now();
    if (now - this.lastLogged < LOG_EVERY_MS) return;
    this.lastLogged = now;
    const since = {
      evicted: this.counts.evicted - this.loggedCounts.evicted,
      refusedFull: this.counts.refusedFull - this.loggedCounts.refusedFull,
      refusedPerAddress: this.counts.refusedPerAddress - this.loggedCounts.refusedPerAddress,
    };
    this.loggedCounts = { ...this.counts };
    log.warn(
      { ...since, open: this.open.size, caps: this.caps },
      "connections refused at the connection caps (counts since the last such line)",
    );
  }
}
