import { readFileSync } from "node:fs";
import { expect } from "chai";
import { configSchema, RENAMED_VARIABLES } from "../../platform/config/config.js";

const DOC = new URL("../../../docs/configuration.md", import.meta.url);

interface DocumentedRow {
  names: string[];
  deprecated: string[];
}

/** The rows of docs/configuration.md's "## Variables" table: names, then deprecated names. */
function documentedRows(): DocumentedRow[] {
  const text = readFileSync(DOC, "utf8");
  const start = text.indexOf("\n## Variables\n");
  expect(start, "docs/configuration.md has a ## Variables section").to.be.greaterThan(-1);
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  const namesIn = (cell: string | undefined) =>
    [...(cell ?? "").matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map(([, name]) => name as string);
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split("|");
      return { names: namesIn(cells[1]), deprecated: namesIn(cells[2]) };
    });
}

describe("configuration: the table in docs/configuration.md", () => {
  const rows = documentedRows();
  const documented = new Set(rows.flatMap((row) => row.names));
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

  it("gives each setting's deprecated names beside it, exactly those the schema accepts", () => {
    const inDoc = rows.flatMap((row) => row.deprecated.map((old) => [old, row.names] as const));
    for (const [old, names] of inDoc) {
      expect(names, `${old} is documented beside the name that replaces it`).to.include(
        RENAMED_VARIABLES[old],
      );
    }
    expect(inDoc.map(([old]) => old).sort()).to.deep.equal(Object.keys(RENAMED_VARIABLES).sort());
  });
});
