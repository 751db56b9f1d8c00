import fc from "fast-check";

/** Nested arrays or objects, `depth` levels deep. */
function nest(depth: number, asArray: boolean): unknown {
  let v: unknown = "leaf";
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { n: v };
  return v;
}

const HUGE_STRING = "h".repeat(70_000);

/** Numbers at the edges of int32, uint32, int64/safe integers and doubles. */
const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  2 ** 63,
  -(2 ** 63),
  2 ** 64,
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.EPSILON,
];

/** Strings that look like numbers, booleans or nothing, and odd unicode. */
const TRICKY_STRINGS = [
  "",
  " ",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e999",
  "0x10",
  "-0",
  "null",
  "true",
  "undefined",
  "__proto__",
  "constructor",
  "\u0000",
  "\ud800",
  "a\udfffb",
  "\u202e\u2066",
  "😀".repeat(50),
  "e\u0301".repeat(40),
  "../../etc/passwd",
  "%2e%2e%2f",
  "<script>",
  "'; DROP TABLE x; --",
];

/**
 * A value a hostile or careless client might put anywhere: wrong types, edge
 * numbers, tricky and huge strings, deep and wide values, nulls.
 */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constant(HUGE_STRING) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 6, max: 150 }), fc.boolean()).map(([d, a]) => nest(d, a)),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => new Array(n).fill(0)),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 10 }), { maxLength: 5 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })),
  },
);

/** Every path to a value inside a JSON body ("a", "a.0", "a.0.b"). */
export function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== "object") return [];
  const out: string[][] = [];
  for (const [k, v] of Object.entries(value)) {
    const p = [...prefix, k];
    out.push(p, ...pathsOf(v, p));
  }
  return out;
}

export type Mutation =
  | { kind: "set"; path: string[]; value: unknown }
  | { kind: "delete"; path: string[] }
  | { kind: "extra"; name: string; value: unknown };

/** Mutations of a valid body: replace or drop a field at any depth, or add an unknown one. */
export function mutations(base: Record<string, unknown>): fc.Arbitrary<Mutation[]> {
  const paths = pathsOf(base);
  const path = fc.constantFrom(...paths);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("set" as const), path, value: hostileValue }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), path }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("extra" as const),
        name: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...TRICKY_STRINGS)),
        value: hostileValue,
      }),
    },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 });
}

/** A deep copy of `base` with the mutations applied. */
export function mutate(base: Record<string, unknown>, ms: Mutation[]): Record<string, unknown> {
  const body = structuredClone(base);
  for (const m of ms) {
    if (m.kind === "extra") {
      Object.defineProperty(body, m.name, {
        value: m.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      continue;
    }
    let parent: Record<string, unknown> | undefined = body;
    for (const key of m.path.slice(0, -1)) {
      const next: unknown = parent?.[key];
      parent =
        next !== null && typeof next === "object" ? (next as Record<string, unknown>) : undefined;
    }
    const last = m.path[m.path.length - 1] as string;
    if (!parent || !Object.hasOwn(parent, last)) continue;
    if (m.kind === "delete") delete parent[last];
    else parent[last] = m.value;
  }
  return body;
}

/** Bodies that are not JSON objects at all: garbage bytes, cut-off JSON, other JSON types. */
export function brokenBodies(base: Record<string, unknown>): fc.Arbitrary<string> {
  const json = JSON.stringify(base);
  return fc.oneof(
    fc.string({ unit: "binary", maxLength: 60 }),
    fc.integer({ min: 0, max: json.length - 1 }).map((n) => json.slice(0, n)),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? "null"),
    fc.constantFrom("", "{", "[]", "null", '{"a":1,}', "{'a':1}", '{"__proto__":{"x":1}}'),
  );
}
