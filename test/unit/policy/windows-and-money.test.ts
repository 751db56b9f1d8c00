import { expect } from "chai";
import { budgetDays, budgetWindow } from "../../../domain/windows.js";
import { fromMicros, toMicros } from "../../../governance/policy/money.js";
import { usageWindow } from "../../../store/key-usage.js";

const at = (iso: string) => new Date(iso);

function window(interval: "daily" | "weekly" | "monthly", iso: string) {
  const w = budgetWindow(interval, at(iso));
  return { id: w.id, start: w.start.toISOString(), end: w.end.toISOString() };
}

describe("budget windows (UTC)", () => {
  it("usageWindow (remembered per UTC day) agrees with budgetWindow at every hour of two years, going forwards and back", () => {
    const start = Date.UTC(2027, 0, 1) - 2 * 365 * 86_400_000;
    const times: number[] = [];
    for (let t = start; t < Date.UTC(2027, 0, 1); t += 3_600_000 + 61_000) times.push(t);
    // Backwards too: a clock that steps back (a test's, a corrected host's) is never served
    // a window it already left.
    for (const t of [...times, ...times.reverse()]) {
      for (const interval of ["daily", "weekly", "monthly"] as const) {
        const w = budgetWindow(interval, new Date(t));
        expect(usageWindow(interval, new Date(t)), new Date(t).toISOString()).to.deep.equal({
          id: w.id,
          ttlSeconds: Math.ceil((w.end.getTime() - t) / 1000) + 86_400,
        });
      }
    }
  });

  it("budgetDays names the same days as budgetWindow, every hour of two years", () => {
    const start = Date.UTC(2027, 0, 1) - 2 * 365 * 86_400_000;
    for (let t = start; t < Date.UTC(2027, 0, 1); t += 3_600_000 + 61_000) {
      for (const interval of ["daily", "weekly", "monthly"] as const) {
        const w = budgetWindow(interval, new Date(t));
        expect(budgetDays(interval, new Date(t)), new Date(t).toISOString()).to.deep.equal({
          firstDay: w.firstDay,
          today: w.today,
        });
      }
    }
  });

  describe("daily", () => {
    it("starts at 00:00 UTC and lasts one day", () => {
      expect(window("daily", "2026-03-15T13:45:00.000Z")).to.deep.equal({
        id: "daily:2026-03-15",
        start: "2026-03-15T00:00:00.000Z",
        end: "2026-03-16T00:00:00.000Z",
      });
    });

    it("midnight opens the next day; the last millisecond belongs to the old one", () => {
      expect(window("daily", "2026-03-16T00:00:00.000Z").id).to.equal("daily:2026-03-16");
      expect(window("daily", "2026-03-15T23:59:59.999Z").id).to.equal("daily:2026-03-15");
    });

    it("rolls over months and years", () => {
      expect(window("daily", "2026-02-28T12:00:00.000Z").end).to.equal("2026-03-01T00:00:00.000Z");
      expect(window("daily", "2026-12-31T23:00:00.000Z")).to.deep.equal({
        id: "daily:2026-12-31",
        start: "2026-12-31T00:00:00.000Z",
        end: "2027-01-01T00:00:00.000Z",
      });
    });

    it("is UTC whatever the offset the instant was written in", () => {
      // 01:30 in UTC+02:00 is still the previous UTC day.
      expect(window("daily", "2026-03-16T01:30:00.000+02:00").id).to.equal("daily:2026-03-15");
    });
  });

  describe("weekly", () => {
    it("a Sunday belongs to the week that began the Monday before", () => {
      // 2026-03-15 is a Sunday.
      expect(at("2026-03-15T12:00:00Z").getUTCDay()).to.equal(0);
      expect(window("weekly", "2026-03-15T23:59:59.999Z")).to.deep.equal({
        id: "weekly:2026-03-09",
        start: "2026-03-09T00:00:00.000Z",
        end: "2026-03-16T00:00:00.000Z",
      });
    });

    it("a Monday at 00:00 UTC opens a new week", () => {
      expect(at("2026-03-16T00:00:00Z").getUTCDay()).to.equal(1);
      expect(window("weekly", "2026-03-16T00:00:00.000Z")).to.deep.equal({
        id: "weekly:2026-03-16",
        start: "2026-03-16T00:00:00.000Z",
        end: "2026-03-23T00:00:00.000Z",
      });
    });

    it("every day of one week shares the window", () => {
      const ids = [16, 17, 18, 19, 20, 21, 22].map(
        (d) => window("weekly", `2026-03-${d}T10:00:00.000Z`).id,
      );
      expect(new Set(ids)).to.deep.equal(new Set(["weekly:2026-03-16"]));
    });

    it("spans a year boundary", () => {
      // 2026-01-01 is a Thursday: its week began on Monday 2025-12-29.
      expect(window("weekly", "2026-01-01T08:00:00.000Z")).to.deep.equal({
        id: "weekly:2025-12-29",
        start: "2025-12-29T00:00:00.000Z",
        end: "2026-01-05T00:00:00.000Z",
      });
    });
  });

  describe("monthly", () => {
    it("starts on the 1st at 00:00 UTC", () => {
      expect(window("monthly", "2026-03-31T23:59:59.999Z")).to.deep.equal({
        id: "monthly:2026-03-01",
        start: "2026-03-01T00:00:00.000Z",
        end: "2026-04-01T00:00:00.000Z",
      });
      expect(window("monthly", "2026-04-01T00:00:00.000Z").id).to.equal("monthly:2026-04-01");
    });

    it("rolls over the year and knows leap years", () => {
      expect(window("monthly", "2026-12-15T00:00:00.000Z").end).to.equal(
        "2027-01-01T00:00:00.000Z",
      );
      expect(window("monthly", "2028-02-29T12:00:00.000Z")).to.deep.equal({
        id: "monthly:2028-02-01",
        start: "2028-02-01T00:00:00.000Z",
        end: "2028-03-01T00:00:00.000Z",
      });
    });
  });
});

describe("money in micro-dollars", () => {
  it("converts exactly where floating point would drift", () => {
    expect(toMicros(0.1 + 0.2)).to.equal(300_000);
    expect(toMicros((12 * 10) / 1_000_000)).to.equal(120);
    expect(toMicros(5)).to.equal(5_000_000);
    expect(fromMicros(120)).to.equal(0.00012);
  });

  it("rounds a fraction of a micro-dollar up, never down to free", () => {
    expect(toMicros(0.0000001)).to.equal(1);
  });
});
