import { readFileSync } from "node:fs";
import { expect } from "chai";
import { configSchema } from "../../platform/config/config.js";

const DOC = new URL("../../../docs/configuration.md", import.meta.url);

/** The variables named in the first column of docs/configuration.md's "## Variables" table. */
function documentedVariables(): Set<string> {
  const text = readFileSync(DOC, "utf8");
  const start = text.indexOf("\n## Variables\n");
  expect(start, "docs/configuration.md has a ## Variables section").to.be.greaterThan(-1);
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const firstCell = line.split("|")[1] ?? "";
    for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name as string);
  }
  return names;
}

describe("configuration: the table in docs/configuration.md", () => {
  const documented = documentedVariables();
  const schema = Object.keys(configSchema.shape);

  it("finds the table (the parse itself works)", () => {
    expect(documented.size).to.be.greaterThan(20);
    expect(schema.length).to.be.greaterThan(20);
  });

  it("documents every variable the schema reads", () => {
    expect(schema.filter((name) => !documented.has(name))).to.deep.equal([]);
  });

  it("documents no variable the schema does not read", () => {
    expect([...documented].filter((name) => !schema.includes(name))).to.deep.equal([]);
  });
});
