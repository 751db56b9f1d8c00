import { readFileSync } from "node:fs";
import type { ParseArgsConfig } from "node:util";
import type { CliClients } from "./clients.js";
import type { ApiClient } from "./http/api-client.js";
import type { Output } from "./output.js";
import { UsageError } from "./usage-error.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Record<string, string | boolean | undefined>;

export interface CommandContext {
  /** The HTTP API at --url (the default transport). */
  api: ApiClient;
  /** The gRPC services (--grpc): made only when a gRPC command runs. */
  clients: CliClients;
  /** The command's own options, after strict parsing. */
  values: Values;
  /** The positional arguments after the command words, checked against `args`. */
  args: string[];
}

export interface Command {
  /** The command words, e.g. "guardrails list". */
  words: string;
  /** Positional arguments, for usage; a trailing "..." takes one or more. */
  args?: string[];
  options?: Options;
  /** Options that must be given. */
  required?: string[];
  summary: string;
  /** Per option, what it carries (per-command --help). */
  optionHelp?: Record<string, string>;
  /** Command lines for --help's examples (one is made from the usage when none is given). */
  examples?: string[];
  /** The HTTP route the command calls (absent for gRPC commands), and what it can send. */
  api?: {
    method: string;
    path: string;
    /** Called instead when the flags that fill `path` are not given. */
    fallbackPath?: string;
    /** Query parameters and body fields a flag or argument carries. */
    query: string[];
    body: string[];
    /** --body/--file: any field of the API's JSON body. */
    anyBody: boolean;
  };
  /** What to print; undefined when the command wrote its own output (an export to stdout). */
  run(ctx: CommandContext): Promise<Output | undefined>;
}

/** An option's string value, or undefined (boolean options are never asked for here). */
export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

export function int(values: Values, name: string, fallback: number): number {
  const v = str(values, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v))
    throw new UsageError(`--${name} must be a non-negative integer, got "${v}"`);
  return Number(v);
}

export function num(values: Values, name: string): number {
  const v = str(values, name) ?? "";
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) {
    throw new UsageError(`--${name} must be a number, got "${v}"`);
  }
  return n;
}

/**
 * A JSON object from --body (inline) or --file (a path, "-" for stdin): the
 * same body the HTTP API takes, checked by the same code.
 */
export function jsonBody(values: Values): Record<string, unknown> {
  const inline = str(values, "body");
  const file = str(values, "file");
  if ((inline === undefined) === (file === undefined)) {
    throw new UsageError("give the body as exactly one of --body JSON or --file PATH");
  }
  const text = inline ?? readFileSync(file === "-" ? 0 : (file as string), "utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `${inline !== undefined ? "--body" : "--file"} is not JSON: ${(err as Error).message}`,
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UsageError("the body must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

export const PAGING: Options = {
  limit: { type: "string" },
  offset: { type: "string" },
};

export const GUARDRAIL_BODY: Options = {
  body: { type: "string" },
  file: { type: "string" },
};
