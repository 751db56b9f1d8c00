import { readFileSync } from "node:fs";
import { expect } from "chai";

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8");

/** The variables docker-compose.yml interpolates: ${NAME}, ${NAME:-default}, ${NAME:?message}. */
function composeVariables(): Set<string> {
  return new Set(
    [...read("docker-compose.yml").matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string),
  );
}

/** The variables .env.example assigns (NAME=value at the start of a line). */
function exampleVariables(): Set<string> {
  return new Set(
    [...read(".env.example").matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string),
  );
}

describe("docker-compose: .env.example", () => {
  const compose = composeVariables();
  const example = exampleVariables();

  it("finds the variables (the parse itself works)", () => {
    expect(compose).to.include("RAILGATE_INTERNAL_TOKEN");
    expect(example).to.include("RAILGATE_INTERNAL_TOKEN");
  });

  it("lists every variable docker-compose.yml uses, and no other", () => {
    expect([...compose].filter((name) => !example.has(name))).to.deep.equal([]);
    expect([...example].filter((name) => !compose.has(name))).to.deep.equal([]);
  });

  it("leaves the credentials empty, so nobody deploys a published secret", () => {
    const text = read(".env.example");
    expect(text).to.match(/^RAILGATE_INTERNAL_TOKEN=$/m);
    expect(text).to.match(/^RAILGATE_MANAGEMENT_KEY=$/m);
    expect(text).to.match(/^OPENAI_API_KEY=$/m);
  });
});
