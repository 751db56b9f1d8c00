import { randomUUID } from "node:crypto";
import { MANAGEMENT_KEY } from "../../test/kit/system.js";
import { UPSTREAM_MODEL } from "../constants.js";
import { newRequestId, observe, send } from "./http.js";
import type { CallObservation } from "./observations.js";
import type { SoakWorld } from "./world.js";

const SENTENCES = [
  "The quick brown fox jumps over the lazy dog.",
  "A soak test keeps talking while processes die around it.",
  "Every admitted request must leave exactly one record.",
  "Short one.",
  "Budgets and credits must agree with the request log to the micro-dollar.",
];

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The steady mixed load: speech clients and management writers, until stop() is called. */
export class SoakLoad {
  readonly calls: CallObservation[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];
  /** Keys and guardrails the writers made, which later writes update. */
  private readonly writerKeys: string[] = [];
  private readonly writerGuardrails: string[] = [];
  private readonly startedAt = Date.now();

  private at(): number {
    return Math.round((Date.now() - this.startedAt) / 1000);
  }

  constructor(
    private readonly baseUrl: string,
    private readonly world: SoakWorld,
  ) {}

  start(speechClients: number, writers: number): void {
    for (let i = 0; i < speechClients; i++) this.loops.push(this.speechLoop());
    for (let i = 0; i < writers; i++) this.loops.push(this.writerLoop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async speechLoop(): Promise<void> {
    while (this.running) {
      const key = pick(this.world.keys);
      const answer = await send(this.baseUrl, "POST", "/api/v1/audio/speech", {
        token: key.secret,
        body: { model: UPSTREAM_MODEL, voice: "alloy", input: pick(SENTENCES) },
        keepBody: false,
      });
      this.calls.push(
        observe("speech", "POST /api/v1/audio/speech", answer, {
          keyHash: key.hash,
          atSeconds: this.at(),
        }),
      );
      // A refused or unanswered client does not spin: the refusals stay a part of the load.
      if (answer.status !== 200) await sleep(answer.status === 0 ? 500 : 100);
    }
  }

  /** A management call with a fresh X-Request-Id (or the given one, on a retry), observed. */
  private async manage(
    kind: "write" | "read",
    method: string,
    route: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; requestId?: string } = {},
  ) {
    const requestId = options.requestId ?? newRequestId();
    const answer = await send(this.baseUrl, method, path, {
      token: MANAGEMENT_KEY,
      body: options.body,
      headers: { "x-request-id": requestId, ...options.headers },
    });
    this.calls.push(
      observe(kind, route, answer, {
        atSeconds: this.at(),
        ...(kind === "write" ? { requestId } : {}),
      }),
    );
    return answer;
  }

  private async writerLoop(): Promise<void> {
    const actions = [
      () => this.createKey(),
      () => this.updateKey(),
      () => this.createGuardrail(),
      () => this.updateGuardrail(),
      () => this.topUp(),
      () => this.manage("read", "GET", "GET /api/v1/generations", "/api/v1/generations?limit=20"),
      () => this.manage("read", "GET", "GET /api/v1/audit-log", "/api/v1/audit-log?limit=20"),
    ];
    while (this.running) {
      await pick(actions)();
      await sleep(100 + Math.random() * 200);
    }
  }

  private async createKey(): Promise<void> {
    const a = await this.manage("write", "POST", "POST /api/v1/keys", "/api/v1/keys", {
      body: {
        name: `soak writer ${randomUUID().slice(0, 8)}`,
        workspace_id: pick(this.world.workspaceIds),
      },
    });
    const hash = (a.body as { data?: { hash?: string } } | undefined)?.data?.hash;
    if (a.status === 201 && hash) this.writerKeys.push(hash);
  }

  private async updateKey(): Promise<void> {
    if (this.writerKeys.length === 0) return this.createKey();
    await this.manage(
      "write",
      "PATCH",
      "PATCH /api/v1/keys/:hash",
      `/api/v1/keys/${pick(this.writerKeys)}`,
      {
        body: { name: `soak renamed ${randomUUID().slice(0, 8)}` },
      },
    );
  }

  private async createGuardrail(): Promise<void> {
    const a = await this.manage("write", "POST", "POST /api/v1/guardrails", "/api/v1/guardrails", {
      body: {
        name: `soak guardrail ${randomUUID().slice(0, 8)}`,
        workspace_id: pick(this.world.workspaceIds),
      },
    });
    const id = (a.body as { data?: { id?: string } } | undefined)?.data?.id;
    if (a.status === 201 && id) this.writerGuardrails.push(id);
  }

  private async updateGuardrail(): Promise<void> {
    if (this.writerGuardrails.length === 0) return this.createGuardrail();
    await this.manage(
      "write",
      "PATCH",
      "PATCH /api/v1/guardrails/:id",
      `/api/v1/guardrails/${pick(this.writerGuardrails)}`,
      { body: { name: `soak guardrail ${randomUUID().slice(0, 8)}` } },
    );
  }

  /**
   * A small top-up of the starved workspace with an Idempotency-Key. Unanswered, it is sent again
   * with the same key and request id, as a client retries a payment it does not know the fate of.
   */
  private async topUp(): Promise<void> {
    const id = this.world.starvedWorkspaceId;
    const idempotencyKey = randomUUID();
    const requestId = newRequestId();
    for (let attempt = 0; attempt < 3; attempt++) {
      const a = await this.manage(
        "write",
        "POST",
        "POST /api/v1/workspaces/:id/credits",
        `/api/v1/workspaces/${id}/credits`,
        {
          body: { amount_usd: 0.0001 },
          headers: { "idempotency-key": idempotencyKey },
          requestId,
        },
      );
      if (a.status !== 0 && a.status < 500) return;
      await sleep(1_000);
    }
  }
}
