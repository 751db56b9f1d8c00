import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * Connections accepted that have not sent a request yet. A TCP balancer (a Kubernetes Service,
 * a cloud L4 load balancer) hands a client's connection to a replica and writes the request a
 * moment later; if the replica starts draining in between, Node's server.close() takes that
 * connection for an idle keep-alive one and closes it: the client sees its request dropped
 * ("socket hang up") and cannot know whether a POST was processed. The drain waits for these
 * few connections to send their request (or go away) before closing the idle ones.
 */
export class FreshConnections {
  private readonly fresh = new Set<Socket>();
  /** Connections that already carried a request (a keep-alive reuse, refused while draining). */
  private readonly used = new WeakSet<Socket>();

  attach(server: Server): void {
    server.on("connection", (socket: Socket) => {
      this.fresh.add(socket);
      socket.once("close", () => this.fresh.delete(socket));
    });
  }

  /** A request arrived on `socket`: true when it is not the connection's first. */
  requestArrived(socket: Socket): boolean {
    this.fresh.delete(socket);
    const reused = this.used.has(socket);
    this.used.add(socket);
    return reused;
  }

  /** Resolves once every fresh connection sent its request or closed, or after `withinMs`. */
  async settled(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (this.fresh.size > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
