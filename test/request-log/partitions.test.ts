import { expect } from "chai";
import {
  DayPartitions,
  dropDayPartitionsBefore,
  ensureDayPartitions,
  listDayPartitions,
  partitionName,
} from "../../store/request-log/partitions.js";
import { onBothDatabases } from "../kit/databases.js";

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

onBothDatabases("daily partitions: created ahead, dropped whole for retention", (getDb) => {
  before(async () => {
    // A table of its own, partitioned like the request log (the helpers are generic).
    await getDb().exec(
      "CREATE TABLE events (id text NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)",
    );
  });
  const insert = (id: string, at: string) =>
    getDb().query("INSERT INTO events (id, created_at) VALUES ($1, $2)", [id, at]);

  it("refuses a row for a day without a partition (so the writer must create it first)", async () => {
    const err = (await insert("x", "2026-01-01T10:00:00Z").catch((e: unknown) => e)) as {
      code?: string;
    };
    expect(err.code).to.equal("23514");
  });

  it("creates one partition per UTC day, idempotently, and rows land in their day", async () => {
    await ensureDayPartitions(getDb(), "events", [day("2026-01-01"), day("2026-01-02")]);
    await ensureDayPartitions(getDb(), "events", [day("2026-01-02"), day("2026-01-03")]);
    expect(await listDayPartitions(getDb(), "events")).to.deep.equal([
      day("2026-01-01"),
      day("2026-01-02"),
      day("2026-01-03"),
    ]);
    await insert("a", "2026-01-01T23:59:59.999Z");
    await insert("b", "2026-01-02T00:00:00Z");
    const rows = await getDb().query<{ id: string; part: string }>(
      "SELECT id, tableoid::regclass::text AS part FROM events ORDER BY id",
    );
    expect(rows).to.deep.equal([
      { id: "a", part: partitionName("events", day("2026-01-01")) },
      { id: "b", part: partitionName("events", day("2026-01-02")) },
    ]);
  });

  it("concurrent ensures of the same days do not collide", async () => {
    const days = [day("2026-02-01"), day("2026-02-02")];
    await Promise.all(
      Array.from({ length: 4 }, () => ensureDayPartitions(getDb(), "events", days)),
    );
    const listed = await listDayPartitions(getDb(), "events");
    expect(listed).to.include.members(days);
  });

  it("drops only partitions whose whole day is before the cutoff, with their rows", async () => {
    const dropped = await dropDayPartitionsBefore(
      getDb(),
      "events",
      new Date("2026-01-02T12:00:00Z"),
    );
    expect(dropped).to.deep.equal([day("2026-01-01")]);
    const ids = (await getDb().query<{ id: string }>("SELECT id FROM events")).map((r) => r.id);
    expect(ids).to.deep.equal(["b"]);
    expect(await listDayPartitions(getDb(), "events")).to.not.include(day("2026-01-01"));
  });

  it("DayPartitions asks the database once per day, and again after forget()", async () => {
    const parts = new DayPartitions(getDb(), "events");
    await parts.ensure([new Date("2026-03-05T10:00:00Z"), new Date("2026-03-05T11:00:00Z")]);
    expect(await listDayPartitions(getDb(), "events")).to.include(day("2026-03-05"));
    await getDb().exec(`DROP TABLE ${partitionName("events", day("2026-03-05"))}`);
    // Still believed present: no query, so the insert would fail until forget().
    await parts.ensure([new Date("2026-03-05T12:00:00Z")]);
    expect(await listDayPartitions(getDb(), "events")).to.not.include(day("2026-03-05"));
    parts.forget([day("2026-03-05")]);
    await parts.ensure([new Date("2026-03-05T12:00:00Z")]);
    expect(await listDayPartitions(getDb(), "events")).to.include(day("2026-03-05"));
  });
});
