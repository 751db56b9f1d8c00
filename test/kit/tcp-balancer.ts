import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/**
 * A round-robin TCP (layer 4) balancer on 127.0.0.1:0, as a Kubernetes Service or a cloud
 * network load balancer fronts replicas: each client connection is piped whole to one backend,
 * the next backend in turn. A backend that refuses the connection (its listener is closed: a
 * replica draining or gone) is skipped and the next one tried, as real balancers retry a failed
 * connect; bytes are never replayed once a backend has accepted them.
 */
export class TcpBalancer {
  private readonly backends: number[] = [];
  private next = 0;
  private readonly open = new Set<Socket>();
  /** Backends frozen by `freeze`, and the piped pairs of each backend (to stop and restart). */
  private readonly frozen = new Set<number>();
  private readonly pairs = new Map<number, Set<[Socket, Socket]>>();
  /** Connects a backend refused (the next backend was then tried). */
  refused = 0;
  /** Client connections no backend would take (closed at once). */
  dropped = 0;
  /** Client connections piped to a backend. */
  connections = 0;

  private constructor(private readonly server: Server) {}

  static async start(backends: number[] = []): Promise<TcpBalancer> {
    // allowHalfOpen: a client's FIN is passed on, not answered by closing the response half.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true });
    const balancer = new TcpBalancer(server);
    for (const port of backends) balancer.add(port);
    server.on("connection", (client) => balancer.route(client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return balancer;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  add(port: number): void {
    if (!this.backends.includes(port)) this.backends.push(port);
  }

  /**
   * Stops every byte to and from `port` as a frozen (SIGSTOP) process would, without one: its
   * kernel still accepts connections (new ones are accepted and then left silent), but nothing is
   * read or answered, on open connections either, until `thaw`.
   */
  freeze(port: number): void {
    this.frozen.add(port);
    for (const [client, socket] of this.pairs.get(port) ?? []) {
      client.unpipe(socket);
      socket.unpipe(client);
      client.pause();
      socket.pause();
    }
  }

  thaw(port: number): void {
    this.frozen.delete(port);
    for (const [client, socket] of this.pairs.get(port) ?? []) {
      client.pipe(socket);
      socket.pipe(client);
      client.resume();
      socket.resume();
    }
  }

  /** Client connections piped to `port` now. */
  openTo(port: number): number {
    return this.pairs.get(port)?.size ?? 0;
  }

  remove(port: number): void {
    const i = this.backends.indexOf(port);
    if (i >= 0) this.backends.splice(i, 1);
  }

  private route(client: Socket): void {
    this.open.add(client);
    let upstream: Socket | undefined;
    client.once("close", () => {
      this.open.delete(client);
      upstream?.destroy();
    });
    // A client that goes away while its backend is being chosen must not crash the balancer.
    client.on("error", () => client.destroy());
    const candidates = this.backends.length;
    const start = this.next++;
    const attempt = (tried: number) => {
      if (client.destroyed) return;
      if (tried >= candidates || this.backends.length === 0) {
        this.dropped++;
        client.destroy();
        return;
      }
      const port = this.backends[(start + tried) % this.backends.length] as number;
      const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
      upstream = socket;
      this.open.add(socket);
      let connected = false;
      const pair: [Socket, Socket] = [client, socket];
      socket.once("connect", () => {
        connected = true;
        this.connections++;
        const pairs = this.pairs.get(port) ?? new Set();
        this.pairs.set(port, pairs);
        pairs.add(pair);
        if (this.frozen.has(port)) return;
        client.pipe(socket);
        socket.pipe(client);
        client.resume();
      });
      socket.once("close", () => {
        this.open.delete(socket);
        this.pairs.get(port)?.delete(pair);
        // What the backend sent is still being flushed to the client: end, never destroy, here.
        if (connected) client.end();
      });
      socket.on("error", (err: NodeJS.ErrnoException) => {
        if (!connected && err.code === "ECONNREFUSED") {
          this.refused++;
          attempt(tried + 1);
          return;
        }
        // Mid-connection: the client sees what a real L4 balancer would show, a reset.
        client.destroy();
      });
    };
    attempt(0);
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
