import type { CliClients } from "../clients.js";
import { type Command, jsonBody, type Options, str, type Values } from "../command.js";
import { type Output, type Row, record } from "../output.js";
import { UsageError } from "../usage-error.js";

/**
 * One management operation of the HTTP API, declared: its route, and which flag carries which
 * query parameter or body field. apiCommand turns it into a CLI command; the API checks the
 * values (its messages name the field), the CLI only the shapes a flag cannot carry as text.
 */
export type FieldType = "string" | "number" | "integer" | "boolean" | "list" | "numbers" | "json";

export interface Field {
  /** The flag, without the dashes. */
  flag: string;
  /** The API's query parameter or body field. */
  name: string;
  type: FieldType;
  /** The literal value "null" sends null (clears the field). */
  nullable?: boolean;
  /** What the value is, for --help (the API's name and type otherwise). */
  help?: string;
  /** The body object the field sits in (a policy's config.limit_usd), top level otherwise. */
  under?: string;
}

export interface ApiCommandSpec {
  words: string;
  summary: string;
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** The route; each :param is a positional argument, in order (unless pathFlags fills it). */
  path: string;
  /** :params filled from flags instead (credits add --workspace W: /workspaces/:id/credits). */
  pathFlags?: Record<string, string>;
  /** The route called when the pathFlags flags are not given (assignments keys list). */
  fallbackPath?: string;
  /** One positional MODEL ("author/slug") fills :author and :slug. */
  modelArg?: boolean;
  /** Positional arguments sent as query parameters (generations get ID: ?id=ID). */
  queryArgs?: { arg: string; name: string }[];
  query?: Field[];
  /** Value-less flags that set a body field (keys create --management: kind "management"). */
  switches?: { flag: string; name: string; value: unknown; help: string }[];
  body?: Field[];
  /** --body JSON / --file PATH|- carry the API's whole JSON body; flags set fields on top. */
  rawBody?: boolean;
  /** A trailing positional list sent as this body array (assignments: key_hashes). */
  rest?: { arg: string; name: string };
  /** Body fields the command always sends (keys disable: disabled true). */
  fixed?: Record<string, unknown>;
  /** Flags that must be given. */
  required?: string[];
  /** Table columns when the answer is a list (data: [...]). */
  columns?: string[];
  /** A list row as the table shows it (nested objects flattened to a label). */
  tableRow?: (row: Row) => Row;
  /** Printed under the table (not with --json): what the answer means for the operator. */
  notice?: string;
  /** Command lines for --help (one is made from the usage when none is given). */
  examples?: string[];
}

/** A request as an ApiCommandSpec's flags and arguments build it, before any transport. */
export interface BuiltRequest {
  method: ApiCommandSpec["method"];
  /** The route's path with its parameters filled in (encoded). */
  path: string;
  /** The route's :params by name, as given (not encoded). */
  params: Record<string, string>;
  query: URLSearchParams;
  body?: Record<string, unknown>;
}

/**
 * The same operation over the services' gRPC ports (--grpc): the call the gateway's route makes,
 * answering the JSON the route would send, so both transports print the same.
 */
export type GrpcOperation = (clients: CliClients, req: BuiltRequest) => Promise<unknown>;

export const q = (flag: string, name = flag.replaceAll("-", "_"), help?: string): Field => ({
  flag,
  name,
  type: "string",
  help,
});

/** A body field; the flag defaults to the field's name in kebab case. */
export function f(
  name: string,
  type: FieldType,
  opts: { flag?: string; nullable?: boolean; help?: string; under?: string } = {},
): Field {
  return { flag: opts.flag ?? name.replaceAll("_", "-"), name, type, ...opts };
}

/** Query parameters every paged list takes. */
export const OFFSET_PAGING: Field[] = [q("limit"), q("offset")];
export const CURSOR_PAGING: Field[] = [q("limit"), q("cursor")];

/** The positional arguments: the path's own :params (less those flags fill), then the rest. */
function positionals(spec: ApiCommandSpec): string[] {
  const fromPath = spec.modelArg
    ? ["MODEL"]
    : spec.path
        .split("/")
        .filter((s) => s.startsWith(":") && !spec.pathFlags?.[s.slice(1)])
        .map((s) => s.slice(1).toUpperCase());
  return [
    ...fromPath,
    ...(spec.queryArgs ?? []).map((a) => a.arg),
    ...(spec.rest ? [`${spec.rest.arg}...`] : []),
  ];
}

/**
 * The route's path with its parameters filled in, the parameters by name, and how many
 * positionals it took.
 */
function fillPath(
  spec: ApiCommandSpec,
  values: Values,
  given: string[],
): [string, Record<string, string>, number] {
  const flagged = Object.values(spec.pathFlags ?? {});
  if (spec.fallbackPath && flagged.some((flag) => values[flag] === undefined)) {
    return [spec.fallbackPath, {}, 0];
  }
  if (spec.modelArg) {
    const model = given[0] ?? "";
    const slash = model.indexOf("/");
    if (slash <= 0 || slash === model.length - 1) {
      throw new UsageError(`MODEL must be a model id "author/slug", got "${model}"`);
    }
    const [author, slug] = [model.slice(0, slash), model.slice(slash + 1)];
    const path = spec.path
      .replace(":author", encodeURIComponent(author))
      .replace(":slug", encodeURIComponent(slug));
    return [path, { author, slug }, 1];
  }
  let used = 0;
  const params: Record<string, string> = {};
  const path = spec.path.replace(/:([a-z_]+)/g, (_, param: string) => {
    const flag = spec.pathFlags?.[param];
    const value = flag ? (str(values, flag) ?? "") : (given[used++] ?? "");
    params[param] = value;
    return encodeURIComponent(value);
  });
  return [path, params, used];
}

function number(field: Field, v: string, integer: boolean): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new UsageError(
      `--${field.flag} must be ${integer ? "an integer" : "a number"}, got "${v}"`,
    );
  }
  return n;
}

/** A flag's text as the JSON value of its body field. */
export function fieldValue(field: Field, v: string): unknown {
  if (field.nullable && v === "null") return null;
  const items = () =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  switch (field.type) {
    case "string":
      return v;
    case "number":
      return number(field, v, false);
    case "integer":
      return number(field, v, true);
    case "boolean":
      if (v !== "true" && v !== "false") {
        throw new UsageError(`--${field.flag} must be true or false, got "${v}"`);
      }
      return v === "true";
    case "list":
      return items();
    case "numbers":
      return items().map((s) => number(field, s, false));
    case "json":
      try {
        return JSON.parse(v);
      } catch (err) {
        throw new UsageError(`--${field.flag} is not JSON: ${(err as Error).message}`);
      }
  }
}

/** The answer as a table: a list's rows, or one record's fields; paging hints below a list. */
export function view(
  body: unknown,
  columns: string[] | undefined,
  tableRow: (row: Row) => Row = (row) => row,
): Output {
  const b = (body ?? {}) as Row;
  if (Array.isArray(b.data)) {
    const list = (b.data as Row[]).map(tableRow);
    const cols =
      columns ??
      Object.keys(list[0] ?? {})
        .filter((k) => typeof (list[0] as Row)[k] !== "object")
        .slice(0, 8);
    const footer =
      typeof b.next_cursor === "string"
        ? `next page: --cursor ${b.next_cursor}`
        : typeof b.total_count === "number"
          ? `total: ${b.total_count}`
          : undefined;
    return { kind: "rows", rows: list, columns: cols, json: body, footer };
  }
  if (b.data && typeof b.data === "object") {
    // What comes beside data (a new key's or webhook's secret, shown once) is shown too.
    const { data, ...beside } = b;
    return record({ ...(data as Row), ...beside }, body);
  }
  return record(b, body);
}

/** The global options (apps/cli/railgate.ts): no command may take these names for itself. */
const GLOBAL_FLAGS = new Set(["url", "key", "json", "grpc", "help", "version"]);

/**
 * The CLI command of an operation: over the HTTP API, or with `grpc`, over the services' gRPC
 * ports through that operation (same words, flags and output; no HTTP route to name).
 */
export function apiCommand(spec: ApiCommandSpec, grpc?: GrpcOperation): Command {
  const args = positionals(spec);
  const flags = [
    ...(spec.query ?? []),
    ...(spec.body ?? []),
    ...(spec.switches ?? []),
    ...Object.values(spec.pathFlags ?? {}).map((flag) => ({ flag })),
  ].map((x) => x.flag);
  const taken = flags.filter((flag) => GLOBAL_FLAGS.has(flag));
  // A programming error: the flag would shadow the global one (--key: the caller's key).
  if (taken.length > 0) throw new Error(`${spec.words}: --${taken[0]} is a global option`);
  const options: Options = {};
  const optionHelp: Record<string, string> = {};
  for (const [param, flag] of Object.entries(spec.pathFlags ?? {})) {
    options[flag] = { type: "string" };
    optionHelp[flag] = spec.fallbackPath
      ? `only those of this ${param}`
      : `the :${param} of the route`;
  }
  for (const s of spec.switches ?? []) {
    options[s.flag] = { type: "boolean" };
    optionHelp[s.flag] = s.help;
  }
  for (const field of spec.query ?? []) {
    options[field.flag] = { type: field.type === "boolean" ? "boolean" : "string" };
    optionHelp[field.flag] = field.help ?? `query ${field.name}`;
  }
  for (const field of spec.body ?? []) {
    options[field.flag] = { type: "string" };
    optionHelp[field.flag] =
      field.help ??
      `${field.under ? `${field.under}.` : ""}${field.name}${field.nullable ? " (null clears it)" : ""}`;
  }
  if (spec.rawBody) {
    options.body = { type: "string" };
    options.file = { type: "string" };
    optionHelp.body = "the API's JSON body (flags set fields on top)";
    optionHelp.file = "the same from a file (- for stdin)";
  }
  return {
    words: spec.words,
    summary: spec.summary,
    args,
    options,
    optionHelp,
    required: spec.required,
    examples: spec.examples,
    api: grpc
      ? undefined
      : {
          method: spec.method,
          path: spec.path,
          fallbackPath: spec.fallbackPath,
          query: [...(spec.query ?? []), ...(spec.queryArgs ?? [])].map((x) => x.name),
          body: [
            ...new Set((spec.body ?? []).map((x) => x.under ?? x.name)),
            ...(spec.switches ?? []).map((x) => x.name),
            ...Object.keys(spec.fixed ?? {}),
            ...(spec.rest ? [spec.rest.name] : []),
          ],
          anyBody: spec.rawBody === true,
        },
    async run({ api, clients, values, args: given }) {
      const req = buildRequest(spec, values, given);
      const answer = grpc
        ? await grpc(clients, req)
        : await api.json({ method: req.method, path: req.path, query: req.query, body: req.body });
      const out = view(answer, spec.columns, spec.tableRow);
      return spec.notice ? { ...out, footer: spec.notice } : out;
    },
  };
}

/** The request a command line makes: path, query and body from the flags and arguments. */
function buildRequest(spec: ApiCommandSpec, values: Values, given: string[]): BuiltRequest {
  const [path, params, used] = fillPath(spec, values, given);
  let i = used;
  const query = new URLSearchParams();
  for (const a of spec.queryArgs ?? []) query.set(a.name, given[i++] ?? "");
  for (const field of spec.query ?? []) {
    const v = values[field.flag];
    if (v === true) query.set(field.name, "true");
    else if (typeof v === "string") query.set(field.name, v);
  }
  let body: Record<string, unknown> | undefined;
  if (spec.method !== "GET" && spec.method !== "DELETE") {
    body = { ...spec.fixed };
    if (spec.rawBody && (values.body !== undefined || values.file !== undefined)) {
      body = { ...jsonBody(values), ...body };
    }
    for (const s of spec.switches ?? []) if (values[s.flag] === true) body[s.name] = s.value;
    for (const field of spec.body ?? []) {
      const v = str(values, field.flag);
      if (v === undefined) continue;
      if (!field.under) body[field.name] = fieldValue(field, v);
      else {
        // A nested field's flag sets that one setting on top of the object the body has.
        const inner = body[field.under];
        const obj = inner && typeof inner === "object" ? (inner as Record<string, unknown>) : {};
        body[field.under] = { ...obj, [field.name]: fieldValue(field, v) };
      }
    }
    if (spec.rest) body[spec.rest.name] = given.slice(i);
  }
  return { method: spec.method, path, params, query, body };
}

/** Several commands' specs at once: one declarative list per resource. */
export const apiCommands = (specs: ApiCommandSpec[]): Command[] =>
  specs.map((spec) => apiCommand(spec));

/**
 * The commands of those specs the gRPC transport has: each spec whose route `operations` maps
 * ("METHOD /path/:param", the route as the spec names it) to its RPC.
 */
export function grpcCommands(
  specs: ApiCommandSpec[],
  operations: ReadonlyMap<string, GrpcOperation>,
): Command[] {
  return specs.flatMap((spec) => {
    const operation = operations.get(`${spec.method} ${spec.path}`);
    return operation ? [apiCommand(spec, operation)] : [];
  });
}
