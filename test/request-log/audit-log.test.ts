import { expect } from "chai";
import { type AuditEntry, AuditLog, changesBetween } from "../../store/request-log/audit-log.js";
import { listDayPartitions } from "../../store/request-log/partitions.js";
import { onBothDatabases } from "../kit/databases.js";

const ACTOR = { keyHash: "a".repeat(64), label: "rg-mgmt-...abcd", name: "ops" };
const OTHER = { keyHash: "b".repeat(64), label: "rg-mgmt-...wxyz", name: "ci" };
const DAY_MS = 86_400_000;

function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    action: "key.update",
    resource: { type: "key", id: "k1", label: "my key" },
    workspaceId: "ws-1",
    changes: { name: { before: "a", after: "b" } },
    ...over,
  };
}

describe("changesBetween", () => {
  it("keeps only the fields that changed, null for a side that has none", () => {
    expect(
      changesBetween(
        { name: "a", limit: 5, list: [1, 2], obj: { x: 1, y: 2 }, gone: "z" },
        { name: "b", limit: 5, list: [1, 2], obj: { y: 2, x: 1 }, added: true },
      ),
    ).to.deep.equal({
      name: { before: "a", after: "b" },
      gone: { before: "z", after: null },
      added: { before: null, after: true },
    });
    expect(changesBetween(null, { name: "n" })).to.deep.equal({
      name: { before: null, after: "n" },
    });
    expect(changesBetween({ a: undefined }, { a: null })).to.deep.equal({});
  });
});

onBothDatabases("audit log: append-only events in the database", (getDb) => {
  let log: AuditLog;
  beforeEach(() => {
    log = new AuditLog(getDb(), { queueLimit: 1_000, retentionDays: 30, maxDelayMs: 5 });
  });
  afterEach(async () => {
    await log.close();
  });

  it("stores what was recorded and lists it newest first, with every field", async () => {
    const t0 = new Date("2026-03-01T10:00:00.000Z");
    const first = log.record({ actor: ACTOR, requestId: "req-1" }, entry(), t0);
    const second = log.record(
      { actor: OTHER },
      entry({
        action: "credits.add",
        resource: { type: "credits", id: "ws-1" },
        changes: {
          amount_usd: { before: null, after: 10 },
          balance_usd: { before: 5, after: 15 },
        },
      }),
      new Date(t0.getTime() + 1),
    );
    const { events, more } = await log.list({ limit: 10, from: t0 });
    expect(more).to.equal(false);
    expect(events.map((e) => e.id)).to.deep.equal([second.id, first.id]);
    expect(events[1]).to.deep.equal({
      id: first.id,
      at: t0,
      actor: ACTOR,
      action: "key.update",
      resource: { type: "key", id: "k1", label: "my key" },
      workspaceId: "ws-1",
      changes: { name: { before: "a", after: "b" } },
      requestId: "req-1",
    });
    expect(events[0]).to.deep.include({ requestId: null, actor: OTHER });
    expect(events[0]?.resource).to.deep.equal({ type: "credits", id: "ws-1", label: null });
    expect(events[0]?.changes.balance_usd).to.deep.equal({ before: 5, after: 15 });
  });

  it("never stores a secret's value: the event says that it changed", async () => {
    const at = new Date("2026-03-02T00:00:00Z");
    log.record(
      { actor: ACTOR },
      entry({
        action: "webhook.update",
        resource: { type: "webhook", id: "wh1" },
        changes: {
          secret: { before: "whsec_old", after: "whsec_new" },
          signing_secret: { before: null, after: "s3cr3t" },
          url: { before: "https://a", after: "https://b" },
        },
      }),
      at,
    );
    const [e] = (await log.list({ limit: 1, resourceType: "webhook" })).events;
    expect(e?.changes).to.deep.equal({
      secret: { before: "[redacted]", after: "[redacted]" },
      signing_secret: { before: null, after: "[redacted]" },
      url: { before: "https://a", after: "https://b" },
    });
    const raw = await getDb().query<{ changes: unknown }>(
      "SELECT changes::text AS changes FROM audit_events WHERE resource_id = 'wh1'",
    );
    expect(JSON.stringify(raw)).not.to.match(/whsec|s3cr3t/);
  });

  it("filters by action, resource, actor, workspace and time, and pages with a cursor", async () => {
    const base = Date.parse("2026-04-01T00:00:00Z");
    const made = [];
    for (let i = 0; i < 7; i++) {
      made.push(
        log.record(
          { actor: i % 2 === 0 ? ACTOR : OTHER },
          entry({
            action: i < 4 ? "guardrail.update" : "guardrail.delete",
            resource: { type: "guardrail", id: `g${i % 3}`, label: null },
            workspaceId: i === 6 ? "ws-2" : "ws-f",
          }),
          // Two events share a millisecond: the id orders them, and paging still sees each once.
          new Date(base + Math.min(i, 5) * 1000),
        ),
      );
    }
    const ids = async (q: Parameters<AuditLog["list"]>[0]) =>
      (await log.list(q)).events.map((e) => e.id);
    const inRange = { from: new Date(base), to: new Date(base + 10_000), limit: 100 };
    expect(await ids({ ...inRange, action: "guardrail.delete" })).to.have.members(
      made.slice(4).map((e) => e.id),
    );
    expect(await ids({ ...inRange, resourceId: "g1" })).to.have.members(
      [made[1], made[4]].map((e) => e?.id),
    );
    expect(await ids({ ...inRange, actor: OTHER.keyHash })).to.have.members(
      [made[1], made[3], made[5]].map((e) => e?.id),
    );
    expect(await ids({ ...inRange, workspaceId: "ws-2" })).to.deep.equal([made[6]?.id]);
    expect(
      await ids({ ...inRange, from: new Date(base + 1000), to: new Date(base + 3000) }),
    ).to.deep.equal([made[2]?.id, made[1]?.id]);
    // Pages of 3 cover all 7 once, newest first.
    const seen: string[] = [];
    let after: { at: Date; id: string } | undefined;
    for (let page = 0; page < 5; page++) {
      const { events, more } = await log.list({ ...inRange, limit: 3, after });
      seen.push(...events.map((e) => e.id));
      const last = events.at(-1);
      if (!more || !last) break;
      after = { at: last.at, id: last.id };
    }
    expect(seen).to.deep.equal(await ids(inRange));
    expect(new Set(seen)).to.deep.equal(new Set(made.map((e) => e.id)));
  });

  it("is append-only: UPDATE, DELETE and TRUNCATE are refused; retention drops whole days", async () => {
    const old = new Date("2026-01-10T12:00:00Z");
    log.record({ actor: ACTOR }, entry({ resource: { type: "key", id: "old" } }), old);
    await log.list({ limit: 1 });
    for (const sql of [
      "UPDATE audit_events SET action = 'x' WHERE resource_id = 'old'",
      "DELETE FROM audit_events WHERE resource_id = 'old'",
      "TRUNCATE audit_events",
    ]) {
      const err = (await getDb()
        .query(sql)
        .catch((e: unknown) => e)) as { message?: string };
      expect(err?.message, sql).to.match(/append-only/);
    }
    // Also on the partition itself.
    const err = (await getDb()
      .query("DELETE FROM audit_events_p20260110")
      .catch((e: unknown) => e)) as { message?: string };
    expect(err?.message).to.match(/append-only/);
    expect((await log.list({ limit: 10, resourceId: "old" })).events).to.have.length(1);
    // 30 days of retention on 2026-02-15: the day of 2026-01-10 is dropped with its events.
    const dropped = await log.maintain(new Date("2026-02-15T00:30:00Z"));
    expect(dropped).to.include(Date.parse("2026-01-10T00:00:00Z"));
    expect((await log.list({ limit: 10, resourceId: "old" })).events).to.have.length(0);
    const days = await listDayPartitions(getDb(), "audit_events");
    expect(days).to.include.members([
      Date.parse("2026-02-15T00:00:00Z"),
      Date.parse("2026-02-16T00:00:00Z"),
    ]);
    expect(days.every((d) => d + DAY_MS > Date.parse("2026-01-16T00:30:00Z"))).to.equal(true);
  });

  it("writes a batch again without doubling it (idempotent by id)", async () => {
    const at = new Date("2026-05-01T00:00:00Z");
    const e = log.record({ actor: ACTOR }, entry({ resource: { type: "key", id: "twice" } }), at);
    await log.list({ limit: 1 });
    // The writer retrying a batch that had in fact been applied: ON CONFLICT keeps one row.
    const insert = (log as unknown as { insert(batch: unknown[]): Promise<void> }).insert.bind(log);
    await insert([{ event: e }]);
    expect((await log.list({ limit: 10, resourceId: "twice" })).events).to.have.length(1);
  });
});
