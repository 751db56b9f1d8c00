import { expect } from "chai";
import { canonicalId, isUuid, newGenerationId, newId, newOrderedId } from "../../../domain/ids.js";

describe("ids", () => {
  it("makes ordered ids that sort in the order they were made, many within one millisecond", () => {
    const ids = Array.from({ length: 5000 }, () => newOrderedId());
    expect(new Set(ids).size).to.equal(ids.length);
    expect([...ids].sort()).to.deep.equal(ids);
    for (const id of ids.slice(0, 10)) expect(isUuid(id), id).to.equal(true);
  });

  it("makes generation ids as gen- and a time-ordered UUID, kept as they are by canonicalId", () => {
    const ids = Array.from({ length: 1000 }, () => newGenerationId());
    expect([...ids].sort()).to.deep.equal(ids);
    for (const id of ids.slice(0, 10)) {
      expect(id).to.match(/^gen-[0-9a-f-]{36}$/);
      expect(isUuid(id.slice(4)), id).to.equal(true);
      expect(canonicalId(id.toUpperCase().replace("GEN-", "gen-"))).to.equal(id);
    }
  });

  it("keeps random ids random (v4): nothing orders them", () => {
    const id = newId();
    expect(isUuid(id)).to.equal(true);
    expect(id[14]).to.equal("4");
  });
});
