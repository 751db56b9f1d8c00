import { expect } from "chai";
import { parseInstant } from "../../../gateway/json/instant.js";

describe("parseInstant: ISO 8601 instants and UTC days, strictly", () => {
  it("reads instants with their zone, fractions and UTC days", () => {
    const iso = (t: string) => parseInstant(t)?.toISOString();
    expect(iso("2026-11-26T08:00:00Z")).to.equal("2026-11-26T08:00:00.000Z");
    expect(iso("2026-11-26T09:30:00.25+01:30")).to.equal("2026-11-26T08:00:00.250Z");
    expect(iso("2026-11-26T03:00:00-05:00")).to.equal("2026-11-26T08:00:00.000Z");
    expect(iso("2026-11-26T08:00Z")).to.equal("2026-11-26T08:00:00.000Z");
    expect(iso("2026-11-26")).to.equal("2026-11-26T00:00:00.000Z");
    expect(iso("2028-02-29")).to.equal("2028-02-29T00:00:00.000Z");
  });

  it("refuses what is no instant, where Date would roll over or guess a zone", () => {
    for (const bad of [
      "2030-02-30T00:00:00Z",
      "2027-02-29",
      "2026-13-01",
      "2026-11-26T24:00:00Z",
      "2026-11-26T08:60:00Z",
      "2026-11-26T08:00:61Z",
      "2026-11-26T08:00:00",
      "2026-11-26T08:00:00+25:00",
      "26-11-2026",
      "tomorrow",
      "",
    ]) {
      expect(parseInstant(bad), bad).to.equal(undefined);
    }
  });
});
