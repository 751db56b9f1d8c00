import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { FilterAction, Region } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  AudioFormat,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  BadCursor,
  decodeCursor,
  encodeCursor,
  GenerationRecords,
} from "../../store/request-log/generations.js";
import { COUNT_EXACT_MAX } from "../../store/request-log/match-count.js";
import { listDayPartitions } from "../../store/request-log/partitions.js";
import { onBothDatabases } from "../kit/databases.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse("2026-11-20T10:00:00Z");
const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);

let seq = 0;
function gen(over: MessageInitShape<typeof GenerationSchema> & { atMs?: number } = {}): Generation {
  const { atMs, ...fields } = over;
  seq += 1;
  return create(GenerationSchema, {
    id: `gen-${String(seq).padStart(6, "0")}`,
    model: "acme/voice",
    provider: "acme",
    characters: 10,
    costUsd: 0.001,
    format: AudioFormat.MP3,
    durationSeconds: 1.5,
    keyHash: KEY_A,
    workspaceId: "ws-1",
    status: GenerationStatus.COMPLETED,
    bytes: 1234n,
    timeToFirstByteMs: 100,
    voice: "alloy",
    speed: 1,
    dataRegion: Region.GLOBAL,
    createdAt: timestampFromMs(atMs ?? T0),
    ...fields,
  });
}

onBothDatabases("request log: the generations table", (getDb) => {
  let records: GenerationRecords;
  before(() => {
    records = new GenerationRecords(getDb());
  });

  it("writes a record and reads it back whole (columns + rest + trace), idempotently by id", async () => {
    const g = gen({
      trace: { trace_id: "t-1", nested: { a: [1, 2] } },
      sessionId: "s-1",
      user: "u-1",
      filterOutcomes: [
        {
          slug: "email",
          label: "[EMAIL]",
          action: FilterAction.REDACT,
          count: 2,
          guardrailId: "g-1",
        },
      ],
      guardrailId: "g-1",
    });
    await records.insert([g]);
    // A retried batch (its answer was lost) leaves one row.
    await records.insert([g]);
    const rows = await getDb().query<{ n: number }>(
      "SELECT count(*)::int AS n FROM generations WHERE id = $1",
      [g.id],
    );
    expect(rows[0]?.n).to.equal(1);
    const back = await records.get(g.id, {});
    expect(back && toBinary(GenerationSchema, back)).to.deep.equal(toBinary(GenerationSchema, g));
  });

  it("keeps the trace out of the record's bytes (its own column)", async () => {
    const g = gen({ trace: { secret_marker: "zz-trace-marker" } });
    await records.insert([g]);
    const [row] = await getDb().query<{ record: Uint8Array; trace: Uint8Array }>(
      "SELECT record, trace FROM generations WHERE id = $1",
      [g.id],
    );
    expect(Buffer.from(row?.record ?? []).toString("latin1")).to.not.include("zz-trace-marker");
    expect(Buffer.from(row?.trace ?? []).toString("latin1")).to.include("zz-trace-marker");
  });

  it("scopes a lookup: another workspace or key does not find the record", async () => {
    const g = gen({ workspaceId: "ws-scope", keyHash: KEY_B });
    await records.insert([g]);
    expect(await records.get(g.id, { workspaceId: "ws-other" })).to.equal(undefined);
    expect(await records.get(g.id, { workspaceId: "ws-scope", keyHash: KEY_A })).to.equal(
      undefined,
    );
    expect((await records.get(g.id, { workspaceId: "ws-scope", keyHash: KEY_B }))?.id).to.equal(
      g.id,
    );
  });

  describe("lists", () => {
    const ws = "ws-list";
    const made: Generation[] = [];
    before(async () => {
      // 25 records an hour apart over two days, with a mix of every filter column.
      for (let i = 0; i < 25; i++) {
        made.push(
          gen({
            workspaceId: ws,
            atMs: T0 + i * HOUR,
            keyHash: i % 2 ? KEY_A : KEY_B,
            model: i % 3 ? "acme/voice" : "other/voice",
            provider: i % 3 ? "acme" : "other",
            status: i % 5 === 0 ? GenerationStatus.REFUSED : GenerationStatus.COMPLETED,
            refusalReason: i % 5 === 0 ? "content_blocked" : "",
            filterOutcomes:
              i % 5 === 0
                ? [
                    {
                      slug: "email",
                      label: "[EMAIL]",
                      action: FilterAction.BLOCK,
                      count: 1,
                      guardrailId: "g-block",
                    },
                  ]
                : i % 4 === 0
                  ? [
                      {
                        slug: "phone",
                        label: "[PHONE]",
                        action: FilterAction.REDACT,
                        count: 1,
                        guardrailId: "g-red",
                      },
                      {
                        slug: "custom",
                        label: "X",
                        action: FilterAction.FLAG,
                        count: 1,
                        guardrailId: "g-flag",
                      },
                    ]
                  : [],
            guardrailId: i % 5 === 0 ? "g-block" : i % 4 === 0 ? "g-red" : "",
          }),
        );
      }
      // Inserted in two batches, out of order: order comes from the query.
      await records.insert(made.slice(10));
      await records.insert(made.slice(0, 10));
    });

    const ids = (items: Generation[]) => items.map((g) => g.id);
    const newestFirst = () => [...made].reverse();

    it("pages newest first with a cursor, every record once", async () => {
      const seen: string[] = [];
      let cursor: ReturnType<typeof decodeCursor> | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await records.list({ workspaceId: ws, limit: 7, cursor });
        seen.push(...ids(res.items));
        if (!res.next) break;
        cursor = decodeCursor(encodeCursor(res.next));
      }
      expect(seen).to.deep.equal(ids(newestFirst()));
    });

    it("filters by key, model, provider, status, outcome, guardrail and time, each alone", async () => {
      const all = newestFirst();
      const cases: [Parameters<GenerationRecords["list"]>[0], (g: Generation) => boolean][] = [
        [{ workspaceId: ws, limit: 100, keyHash: KEY_A }, (g) => g.keyHash === KEY_A],
        [{ workspaceId: ws, limit: 100, model: "other/voice" }, (g) => g.model === "other/voice"],
        [{ workspaceId: ws, limit: 100, provider: "acme" }, (g) => g.provider === "acme"],
        [
          { workspaceId: ws, limit: 100, status: GenerationStatus.REFUSED },
          (g) => g.status === GenerationStatus.REFUSED,
        ],
        [
          { workspaceId: ws, limit: 100, outcome: FilterAction.BLOCK },
          (g) => g.filterOutcomes.some((o) => o.action === FilterAction.BLOCK),
        ],
        [
          { workspaceId: ws, limit: 100, outcome: FilterAction.FLAG },
          (g) => g.filterOutcomes.some((o) => o.action === FilterAction.FLAG),
        ],
        [
          { workspaceId: ws, limit: 100, outcome: FilterAction.REDACT },
          (g) => g.filterOutcomes.some((o) => o.action === FilterAction.REDACT),
        ],
        [{ workspaceId: ws, limit: 100, guardrailId: "g-red" }, (g) => g.guardrailId === "g-red"],
        [
          { workspaceId: ws, limit: 100, fromMs: T0 + 5 * HOUR, toMs: T0 + 9 * HOUR },
          (g) => {
            const at = Number(g.createdAt?.seconds) * 1000;
            return at >= T0 + 5 * HOUR && at < T0 + 9 * HOUR;
          },
        ],
      ];
      for (const [query, keep] of cases) {
        const res = await records.list(query);
        const want = ids(all.filter(keep));
        expect(want.length, JSON.stringify(query)).to.be.greaterThan(0);
        expect(ids(res.items), JSON.stringify(query)).to.deep.equal(want);
      }
    });

    it("refuses a cursor it did not make", () => {
      for (const bad of [
        "",
        "!!",
        Buffer.from("[1]").toString("base64url"),
        Buffer.from('{"a":1}').toString("base64url"),
      ]) {
        expect(() => decodeCursor(bad)).to.throw(BadCursor);
      }
    });

    it("adds up activity per day, model and provider (refused requests left out)", async () => {
      const rows = await records.activity({ workspaceId: ws }, T0 - DAY, T0 + 3 * DAY);
      const served = made.filter((g) => g.status !== GenerationStatus.REFUSED);
      const total = rows.reduce((n, r) => n + r.requests, 0);
      expect(total).to.equal(served.length);
      const day1 = rows.filter((r) => r.date === "2026-11-20");
      const expectDay1 = served.filter((g) =>
        new Date(Number(g.createdAt?.seconds) * 1000).toISOString().startsWith("2026-11-20"),
      );
      expect(day1.reduce((n, r) => n + r.requests, 0)).to.equal(expectDay1.length);
      expect(rows[0]?.date >= (rows.at(-1)?.date ?? "")).to.equal(true);
      const usage = rows.reduce((n, r) => n + r.usage, 0);
      expect(usage).to.be.closeTo(served.length * 0.001, 1e-9);
      const byWs = await records.activity({}, T0 - DAY, T0 + 3 * DAY, true);
      expect(byWs.some((r) => r.workspaceId === ws)).to.equal(true);
    });

    it("builds usage series per bucket and group, with percentiles and filter actions", async () => {
      const rows = await records.usage(
        { workspaceId: ws },
        "day",
        "status",
        T0 - DAY,
        T0 + 3 * DAY,
      );
      const refused = rows.filter((r) => r.group === "refused");
      expect(refused.reduce((n, r) => n + r.requests, 0)).to.equal(5);
      expect(refused.reduce((n, r) => n + r.blocked, 0)).to.equal(5);
      const hourly = await records.usage(
        { workspaceId: ws },
        "hour",
        "guardrail",
        T0,
        T0 + 2 * HOUR,
      );
      expect(hourly.map((r) => r.bucketMs)).to.deep.equal([T0, T0 + HOUR]);
      expect(hourly[0]?.group).to.equal("g-block");
      expect(hourly[0]?.ttfbP50Ms).to.equal(100);
      const byKey = await records.usage({ workspaceId: ws }, "day", "key", T0 - DAY, T0 + 3 * DAY);
      expect(new Set(byKey.map((r) => r.group))).to.deep.equal(new Set([KEY_A, KEY_B]));
      const redacted = byKey.reduce((n, r) => n + r.redacted, 0);
      expect(redacted).to.equal(
        made.filter((g) => g.filterOutcomes.some((o) => o.action === FilterAction.REDACT)).length,
      );
    });
  });

  it("counts a list's matches exactly up to 10,000, then marks the planner's estimate", async () => {
    const ws = "ws-count";
    const batch = Array.from({ length: COUNT_EXACT_MAX + 1 }, (_, i) =>
      gen({
        workspaceId: ws,
        atMs: T0 + i,
        status: GenerationStatus.REFUSED,
        refusalReason: i % 2 ? "rate_limited" : "budget_exceeded",
      }),
    );
    await records.insert(batch);
    await getDb().query("ANALYZE generations");
    const exact = await records.count({ workspaceId: ws, limit: 1, refusalReason: "rate_limited" });
    expect(exact).to.deep.equal({ total: COUNT_EXACT_MAX / 2, estimate: false });
    const estimated = await records.count({ workspaceId: ws, limit: 1 });
    expect(estimated.estimate).to.equal(true);
    expect(estimated.total).to.be.at.least(COUNT_EXACT_MAX + 1);
  });

  it("maintenance creates partitions ahead and drops those past retention", async () => {
    const old = gen({ atMs: T0 - 40 * DAY });
    await records.insert([old]);
    const now = T0 + 5 * DAY;
    const dropped = await records.maintain(now, 30);
    expect(dropped).to.include(
      Math.floor(old.createdAt ? (Number(old.createdAt.seconds) * 1000) / DAY : 0) * DAY,
    );
    expect(await records.get(old.id, {})).to.equal(undefined);
    const days = await listDayPartitions(getDb(), "generations");
    const today = Math.floor(now / DAY) * DAY;
    expect(days).to.include.members([today, today + DAY, today + 2 * DAY]);
    // A record of a day whose partition was dropped can still come (a late retry): recreated.
    await records.insert([gen({ atMs: T0 - 40 * DAY })]);
  });
});
