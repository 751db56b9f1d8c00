import { expect } from "chai";
import { ScopedCache } from "../../../platform/scoped-cache.js";

describe("ScopedCache: the principals' and the gateway's keys' cache", () => {
  it("drops one scope's entries, or every entry for *", () => {
    const cache = new ScopedCache<string>({ maxEntries: 10 });
    cache.set("a", "w1", "A");
    cache.set("b", "w2", "B");
    cache.invalidate("w1");
    expect([cache.get("a"), cache.get("b")]).to.deep.equal([undefined, "B"]);
    cache.invalidate("*");
    expect(cache.get("b")).to.equal(undefined);
  });

  it("does not cache a load that an invalidation of its scope overtook", () => {
    const cache = new ScopedCache<string>({ maxEntries: 10 });
    const before = cache.snapshot();
    cache.invalidate("w1");
    cache.set("a", "w1", "stale", before);
    cache.set("b", "w2", "fresh", before);
    expect([cache.get("a"), cache.get("b")]).to.deep.equal([undefined, "fresh"]);
    const beforeAll = cache.snapshot();
    cache.invalidate("*");
    cache.set("c", "w3", "stale", beforeAll);
    expect(cache.get("c")).to.equal(undefined);
  });

  it("stays bounded: one entry past the cap starts over", () => {
    const cache = new ScopedCache<number>({ maxEntries: 2 });
    cache.set("a", "w", 1);
    cache.set("b", "w", 2);
    cache.set("c", "w", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).to.deep.equal([
      undefined,
      undefined,
      3,
    ]);
  });
});
