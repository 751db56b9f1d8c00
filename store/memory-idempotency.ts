import { randomUUID } from "node:crypto";
import type { Clock } from "../platform/time.js";
import type { IdempotencyClaim, IdempotencyLedger, IdempotentAnswer } from "./types.js";

interface Entry {
  fingerprint: string;
  /** The claim's token while it is in progress; undefined once answered. */
  token?: string;
  answer?: IdempotentAnswer;
  expiresAt: number;
}

/** The embedded store's idempotency records: the same states and expiries as the Redis hash. */
export class MemoryIdempotency implements IdempotencyLedger {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  private live(id: string): Entry | undefined {
    const e = this.entries.get(id);
    if (e && e.expiresAt <= this.clock.now()) {
      this.entries.delete(id);
      return undefined;
    }
    return e;
  }

  async claimIdempotency(
    id: string,
    fingerprint: string,
    claimSeconds: number,
  ): Promise<IdempotencyClaim> {
    const now = this.clock.now();
    // Every key leaves an answer behind for a day: sweep the expired ones now and then.
    if (this.entries.size > 1_000 && this.entries.size % 100 === 0) {
      for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
    }
    const e = this.live(id);
    if (e?.answer) return { state: "done", fingerprint: e.fingerprint, answer: { ...e.answer } };
    if (e) return { state: "in-progress", fingerprint: e.fingerprint };
    const token = randomUUID();
    this.entries.set(id, { fingerprint, token, expiresAt: now + claimSeconds * 1000 });
    return { state: "claimed", token };
  }

  async completeIdempotency(
    id: string,
    token: string,
    answer: IdempotentAnswer,
    ttlSeconds: number,
  ): Promise<boolean> {
    const e = this.live(id);
    if (!e || e.token !== token) return false;
    this.entries.set(id, {
      fingerprint: e.fingerprint,
      answer: { ...answer },
      expiresAt: this.clock.now() + ttlSeconds * 1000,
    });
    return true;
  }

  async releaseIdempotency(id: string, token: string): Promise<void> {
    if (this.live(id)?.token === token) this.entries.delete(id);
  }
}
