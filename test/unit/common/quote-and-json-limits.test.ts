import { expect } from "chai";
import { QUOTE_MAX_CHARS, quote } from "../../../platform/quote.js";
import { checkJsonLimits, checkJsonMembers, fieldPath } from "../../../platform/rpc/json-checks.js";

const LIMITS = { maxBytes: 1024, maxDepth: 4, maxItems: 50 };
const fail = (message: string) => new Error(message);

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe("quote()", () => {
  it("JSON-quotes a short value whole", () => {
    expect(quote("abc")).to.equal('"abc"');
    expect(quote('a"b\n')).to.equal('"a\\"b\\n"');
    expect(quote(42)).to.equal('"42"');
  });

  it(`cuts a long value to ${QUOTE_MAX_CHARS} characters with an ellipsis`, () => {
    const q = quote("x".repeat(70_000));
    expect(q).to.equal(`"${"x".repeat(QUOTE_MAX_CHARS)}…"`);
  });

  it("never cuts a surrogate pair in half", () => {
    const q = quote(`${"x".repeat(QUOTE_MAX_CHARS - 1)}😀😀`);
    expect(q).to.equal(`"${"x".repeat(QUOTE_MAX_CHARS - 1)}…"`);
    expect(q).not.to.match(/\\ud83d/i);
  });
});

describe("JSON value limits", () => {
  it("takes a value within every limit", () => {
    checkJsonLimits("trace", { a: [1, "two", null, true], b: nested(2) }, LIMITS, fail);
  });

  it("names the field and the depth limit", () => {
    checkJsonLimits("trace", nested(4), LIMITS, fail);
    expect(() => checkJsonLimits("trace", nested(5), LIMITS, fail)).to.throw(
      /^trace may nest at most 4 levels deep$/,
    );
    expect(() => checkJsonLimits("trace", nested(50), LIMITS, fail)).to.throw(/levels deep/);
  });

  it("names the field and the size limit, counting UTF-8 bytes", () => {
    expect(() => checkJsonLimits("trace", { s: "é".repeat(600) }, LIMITS, fail)).to.throw(
      /^trace must be at most 1024 bytes as JSON$/,
    );
  });

  it("names the field and the item limit, stopping early on a huge array", () => {
    const huge = new Array(3_200_000).fill(0);
    expect(() => checkJsonLimits("trace", { a: huge }, LIMITS, fail)).to.throw(
      /^trace may hold at most 50 keys and items in all$/,
    );
  });

  it("counts the members of an object together and names the member that crosses a limit", () => {
    const options = { acme: { a: "x".repeat(600) }, other: { b: "y".repeat(600) } };
    expect(() => checkJsonMembers("provider.options", options, LIMITS, fail)).to.throw(
      /^provider\.options\.other must be at most 1024 bytes as JSON \(provider\.options together/,
    );
    expect(() =>
      checkJsonMembers(
        "provider.options",
        { deep: nested(5) as Record<string, unknown> },
        LIMITS,
        fail,
      ),
    ).to.throw(/^provider\.options\.deep may nest at most 4 levels deep/);
  });

  it("quotes a member name that is not a plain name", () => {
    expect(fieldPath("provider.options", "acme")).to.equal("provider.options.acme");
    expect(fieldPath("provider.options", "a.b")).to.equal('provider.options["a.b"]');
    expect(fieldPath("provider.options", "k".repeat(5000)).length).to.be.below(130);
  });
});
