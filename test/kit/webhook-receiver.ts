import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookSignature } from "../../services/webhooks/webhook-signature.js";
import { pollUntil } from "./poll.js";

/** What the receiver answers the next request with. */
export type ReceiverBehaviour =
  | { kind: "status"; status: number; headers?: Record<string, string> }
  /** Never answers (an attempt's time-out). */
  | { kind: "hang" }
  /** Drops the connection without an answer. */
  | { kind: "close" }
  /** Answers this status after a pause (requests pile up: see maxInFlight). */
  | { kind: "slow"; status: number; delayMs: number };

/** One request as a webhook receiver saw it: the raw body, as signatures are checked on it. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: events are JSON the tests inspect
  event: any;
  /** verifyWebhookSignature with the receiver's secret, run as a real receiver would. */
  verified: boolean;
}

/**
 * A real HTTP receiver of budget alerts (node:http on a free port): records
 * each request, checks its signature with `secret`, and answers as told
 * (2xx by default). Start it, point a webhook at `url`, and wait for events.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  behaviour: ReceiverBehaviour = { kind: "status", status: 204 };
  secret = "";
  private server?: Server;
  private hung: (() => void)[] = [];
  private inFlight = 0;
  /** The most requests this receiver held at once (answers not yet written). */
  maxInFlight = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks/railgate`;
  }

  get port(): number {
    if (!this.server) throw new Error("the receiver is not started");
    return (this.server.address() as AddressInfo).port;
  }

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      res.on("close", () => this.inFlight--);
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        let event: unknown;
        try {
          event = JSON.parse(raw);
        } catch {
          event = undefined;
        }
        this.received.push({
          path: req.url ?? "",
          headers: req.headers,
          raw,
          event,
          verified: verifyWebhookSignature({
            secret: this.secret,
            header: req.headers["railgate-signature"] as string | undefined,
            body: Buffer.concat(chunks),
          }).ok,
        });
        const b = this.behaviour;
        if (b.kind === "hang") {
          this.hung.push(() => res.destroy());
          return;
        }
        if (b.kind === "close") {
          req.socket.destroy();
          return;
        }
        if (b.kind === "slow") {
          const timer = setTimeout(() => {
            res.writeHead(b.status);
            res.end();
          }, b.delayMs);
          this.hung.push(() => clearTimeout(timer));
          return;
        }
        res.writeHead(b.status, b.headers ?? {});
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(port, "127.0.0.1", resolve));
    return this;
  }

  /** The events of one type, in arrival order. */
  // biome-ignore lint/suspicious/noExplicitAny: events are JSON the tests inspect
  events(type?: string): any[] {
    return this.received.map((r) => r.event).filter((e) => !type || e?.type === type);
  }

  /** Polls (bounded, no time asserted) until `done` holds of what arrived; returns it either way. */
  async waitFor(
    done: (received: ReceivedWebhook[]) => boolean,
    times = 200,
  ): Promise<ReceivedWebhook[]> {
    return pollUntil(
      async () => this.received,
      (r) => done(r),
      times,
      50,
    );
  }

  async close(): Promise<void> {
    for (const end of this.hung.splice(0)) end();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }
}
