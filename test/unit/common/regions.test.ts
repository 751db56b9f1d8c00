import { expect } from "chai";
import {
  isRegionName,
  quotedRegionNames,
  REGION_NAMES,
  regionName,
  regionValue,
} from "../../../domain/enums.js";
import { Region } from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";

// Tests elsewhere loop over REGION_NAMES: these literals are what keep that list honest.
describe("regions, derived from the proto enum", () => {
  it("names every region but UNSPECIFIED, in the proto's order, in lower case", () => {
    expect(REGION_NAMES).to.deep.equal(["global", "europe", "us"]);
  });

  it("converts names and enum values both ways", () => {
    expect(regionValue("europe")).to.equal(Region.EUROPE);
    expect(regionName(Region.US)).to.equal("us");
    for (const name of REGION_NAMES) expect(regionName(regionValue(name))).to.equal(name);
  });

  it("has no name for UNSPECIFIED or a number no region has", () => {
    expect(regionName(Region.UNSPECIFIED)).to.equal(undefined);
    expect(regionName(99 as Region)).to.equal(undefined);
  });

  it("recognises only the lower-case names", () => {
    expect(isRegionName("global")).to.equal(true);
    for (const s of ["GLOBAL", "REGION_GLOBAL", "unspecified", "eu", "", "toString"])
      expect(isRegionName(s), s).to.equal(false);
  });

  it("quotes the names for messages", () => {
    expect(quotedRegionNames()).to.equal('"global", "europe", "us"');
    expect(quotedRegionNames(" or ")).to.equal('"global", "europe" or "us"');
  });
});
