#!/usr/bin/env node
/**
 * Operator CLI (the `railgate` bin). Talks to a gateway's public HTTP API (--url, else
 * RAILGATE_URL, default http://127.0.0.1:8080) as an ordinary caller with the key given by
 * --key or RAILGATE_KEY (else RAILGATE_MANAGEMENT_KEY, the operator's key the services
 * registered at start-up: how the first further keys are minted). --grpc (or
 * RAILGATE_TRANSPORT=grpc) talks gRPC to the services' ports instead, for internal callers,
 * with the commands that transport has.
 *
 * Exit codes: 0 done, 1 the call failed or was refused, 2 the command line is wrong
 * (unknown command or flag, missing argument, malformed value, a bad RAILGATE_URL or --url).
 * It reads only its own settings (settings.ts): a server's in the same shell are not its.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConnectError } from "@connectrpc/connect";
import { HttpError } from "../../gateway/http-error.js";
import {
  ConfigError,
  deprecationMessage,
  type RailgateConfig,
} from "../../platform/config/config.js";
import { cliClients } from "./clients.js";
import { closest, editDistance } from "./closest.js";
import type { Command, Options, Values } from "./command.js";
import { accountCommands } from "./commands/accounts.js";
import { assignmentCommands } from "./commands/assignments.js";
import { auditCommands } from "./commands/audit.js";
import { configCommands } from "./commands/config.js";
import { guardrailCommands } from "./commands/guardrails.js";
import { policyCommands } from "./commands/policies.js";
import { policyShadowCommands } from "./commands/policy-shadow.js";
import { speechCommands } from "./commands/speech.js";
import { ApiClient, ApiError } from "./http/api-client.js";
import { HTTP_COMMANDS } from "./http/commands.js";
import { render } from "./output.js";
import { cliDeprecations, cliSettings } from "./settings.js";
import { UsageError } from "./usage-error.js";

/** The commands the gRPC transport has (the services' RPCs the CLI has always called). */
const GRPC_COMMANDS: Command[] = [
  ...guardrailCommands,
  ...assignmentCommands,
  ...policyCommands,
  ...policyShadowCommands,
  ...speechCommands,
  ...accountCommands,
  ...auditCommands,
];

const COMMON: Options = {
  url: { type: "string" },
  key: { type: "string" },
  json: { type: "boolean" },
  grpc: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
};

/** Words joined by ", " in lines of at most `width`, each after `indent`. */
function wrap(words: string[], indent: string, width = 96): string[] {
  const lines: string[] = [];
  let line = "";
  for (const w of words) {
    if (line && indent.length + line.length + w.length + 2 > width) {
      lines.push(`${indent}${line},`);
      line = "";
    }
    line = line ? `${line}, ${w}` : w;
  }
  if (line) lines.push(`${indent}${line}`);
  return lines;
}

const GLOBAL_HELP = [
  "global options:",
  "  --url URL   the gateway (default $RAILGATE_URL, else http://127.0.0.1:8080)",
  "  --key KEY   the caller's key (default $RAILGATE_KEY, else $RAILGATE_MANAGEMENT_KEY)",
  "  --json      print the API's JSON instead of a table",
  "  --grpc      talk gRPC to the services' ports instead, for internal callers (also",
  "              RAILGATE_TRANSPORT=grpc; RAILGATE_GUARDRAIL_GRPC_URL, RAILGATE_SPEECH_GRPC_URL), with these commands:",
  ...wrap(
    GRPC_COMMANDS.map((c) => c.words),
    "                ",
  ),
  "  --help      usage of a command or group (railgate keys --help, railgate help keys)",
  "  --version   the version",
  "exit codes: 0 done, 1 the call failed or was refused, 2 the command line is wrong",
].join("\n");

/** Under a group's or command's usage: the global options are listed once, in `railgate help`. */
const GLOBAL_POINTER = "global options (--url, --key, --json, --grpc): railgate help";

/** A command line for the examples, made from the usage when the command names none. */
function madeExample(c: Command): string {
  const required = (c.required ?? []).map((name) => {
    const o = c.options?.[name];
    return o?.type === "boolean"
      ? `--${name}`
      : `--${name} $${name.toUpperCase().replaceAll("-", "_")}`;
  });
  const args = (c.args ?? []).map((a) => `$${a.replace("...", "")}`);
  return ["railgate", c.words, ...args, ...required].join(" ");
}

function flagUsage(name: string, o: Options[string]): string {
  return o.type === "boolean"
    ? `--${name}`
    : `--${name} ${name.toUpperCase().replaceAll("-", "_")}`;
}

function synopsis(c: Command): string {
  const opts = Object.entries(c.options ?? {}).map(([name, o]) => {
    const flag = flagUsage(name, o);
    return c.required?.includes(name) ? flag : `[${flag}]`;
  });
  return [c.words, ...(c.args ?? []), ...opts].join(" ");
}

function commandHelp(c: Command): string {
  const options = Object.entries(c.options ?? {});
  const width = Math.max(0, ...options.map(([n, o]) => flagUsage(n, o).length));
  return [
    `usage: railgate ${synopsis(c)}`,
    `  ${c.summary}`,
    ...(c.api ? [`  calls ${c.api.method} ${c.api.path}`] : []),
    ...(options.length > 0
      ? [
          "",
          "options:",
          ...options.map(([n, o]) =>
            `  ${flagUsage(n, o).padEnd(width)}  ${c.optionHelp?.[n] ?? ""}`.trimEnd(),
          ),
        ]
      : []),
    "",
    "examples:",
    ...(c.examples ?? [madeExample(c)]).map((e) => `  ${e}`),
    "",
    GLOBAL_POINTER,
  ].join("\n");
}

/** A list of commands; the global options only under the top-level one. */
function listHelp(title: string, commands: Command[], top: boolean): string {
  return [
    title,
    "",
    ...commands.flatMap((c) => [
      `  ${c.words} ${(c.args ?? []).join(" ")}`.trimEnd(),
      `      ${c.summary}`,
    ]),
    "",
    "railgate help <command> (or railgate <command> --help) shows a command's options and examples.",
    top ? GLOBAL_HELP : GLOBAL_POINTER,
  ].join("\n");
}

/** "did you mean": the command nearest what was typed, each compared with as many words. */
function nearestCommand(commands: Command[], positionals: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of commands) {
    const typed = positionals.slice(0, c.words.split(" ").length).join(" ");
    const d = editDistance(typed, c.words);
    if (d < bestDistance) {
      best = c.words;
      bestDistance = d;
    }
  }
  return best;
}

function version(): string {
  const pkg = JSON.parse(
    readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
  ) as { version: string };
  return pkg.version;
}

/** The commands whose words start with `words` (a group: "keys", "assignments keys"). */
const inGroup = (commands: Command[], words: string[]) =>
  commands.filter((c) => words.every((w, i) => c.words.split(" ")[i] === w));

/** The command whose words start the positionals, the longest match winning. */
function findCommand(commands: Command[], positionals: string[]): Command | undefined {
  return commands
    .filter((c) => c.words.split(" ").every((w, i) => positionals[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
}

/** argv less the command's words (the first occurrence of each, in order). */
function withoutWords(argv: string[], words: string[]): string[] {
  const rest = [...argv];
  let from = 0;
  for (const w of words) {
    const at = rest.indexOf(w, from);
    if (at < 0) break;
    rest.splice(at, 1);
    from = at;
  }
  return rest;
}

function checkArgs(command: Command, args: string[]): void {
  const spec = command.args ?? [];
  const variadic = spec.at(-1)?.endsWith("...") ?? false;
  if (args.length < spec.length) {
    throw new UsageError(`${command.words}: missing ${spec.slice(args.length).join(" ")}`);
  }
  if (!variadic && args.length > spec.length) {
    throw new UsageError(`${command.words}: unexpected argument "${args[spec.length]}"`);
  }
}

/** `railgate help keys create` is `railgate keys create --help`. */
function helpAsFlag(argv: string[]): string[] {
  const at = argv.findIndex((a) => !a.startsWith("-"));
  if (at < 0 || argv[at] !== "help") return argv;
  return [...argv.slice(0, at), ...argv.slice(at + 1), "--help"];
}

/** parseArgs' unknown-option error as a usage error naming the nearest option. */
function unknownFlag(err: unknown, command: Command, argv: string[]): unknown {
  if ((err as { code?: string }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return err;
  const quoted = /'(-[^']*)'/.exec((err as Error).message)?.[1];
  const typed = quoted ?? argv.find((a) => a.startsWith("-")) ?? "";
  const name = typed.replace(/^-+/, "").split("=")[0] ?? "";
  const known = [...Object.keys(command.options ?? {}), ...Object.keys(COMMON)];
  const near = closest(name, known);
  return new UsageError(
    `${command.words}: unknown flag ${typed}${near ? `: did you mean --${near}?` : ""}`,
  );
}

async function main(input: string[]): Promise<number> {
  const argv = helpAsFlag(input);
  // A first, lenient look: the global flags (anywhere) and the command words.
  const { values: globals, positionals } = parseArgs({
    args: argv,
    options: COMMON,
    allowPositionals: true,
    strict: false,
  });
  // The CLI's own settings, read once; a bad one (or --url) fails a command (exit 2), never
  // --help or --version.
  for (const deprecated of cliDeprecations(process.env)) {
    process.stderr.write(`railgate: ${deprecationMessage(deprecated)}\n`);
  }
  let config: RailgateConfig | undefined;
  let configError: unknown;
  try {
    config = cliSettings(process.env, typeof globals.url === "string" ? globals.url : undefined);
  } catch (err) {
    configError = err;
  }
  const grpc = globals.grpc === true || config?.cli.transport === "grpc";
  // The configuration commands talk to the store and database, whatever the transport.
  const commands = [...(grpc ? GRPC_COMMANDS : HTTP_COMMANDS), ...configCommands];
  const command = findCommand(commands, positionals);
  if (!command) {
    const other = findCommand(grpc ? HTTP_COMMANDS : GRPC_COMMANDS, positionals);
    if (other && grpc) {
      throw new UsageError(
        `"${other.words}" is not available over gRPC: it is a command of the HTTP API (drop --grpc / RAILGATE_TRANSPORT=grpc)`,
      );
    }
    if (positionals.length === 0) {
      if (globals.version === true) {
        process.stdout.write(`railgate ${version()}\n`);
        return 0;
      }
      process.stdout.write(`${listHelp("usage: railgate <command> [options]", commands, true)}\n`);
      return 0;
    }
    const group = inGroup(commands, positionals);
    if (group.length === 0) {
      const near = nearestCommand(commands, positionals);
      throw new UsageError(
        `unknown command "${positionals.join(" ")}"${near ? `: did you mean "${near}"?` : ""}`,
      );
    }
    if (globals.help === true) {
      process.stdout.write(
        `${listHelp(`usage: railgate ${positionals.join(" ")} <command> [options]`, group, false)}\n`,
      );
      return 0;
    }
    throw new UsageError(
      `"${positionals.join(" ")}" needs a command: ${group.map((c) => c.words).join(", ")}`,
    );
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: withoutWords(argv, command.words.split(" ")),
      options: { ...COMMON, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw unknownFlag(err, command, argv);
  }
  const values = parsed.values as Values;
  if (values.help) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  for (const name of command.required ?? []) {
    if (values[name] === undefined) throw new UsageError(`${command.words}: --${name} is required`);
  }
  checkArgs(command, parsed.positionals);
  if (!config) throw configError;
  const key =
    (values.key as string | undefined) ??
    (process.env.RAILGATE_KEY || config.managementKey || undefined);
  const out = await command.run({
    api: new ApiClient(config.cli.url, key),
    clients: cliClients(key, config),
    values,
    args: parsed.positionals,
  });
  if (out) process.stdout.write(`${render(out, values.json === true)}\n`);
  return 0;
}

/** One line on stderr, and the exit code that says whose mistake it was. */
function failure(err: unknown): number {
  const usage =
    err instanceof UsageError ||
    err instanceof ConfigError ||
    // parseArgs' own errors: unknown flag, a flag missing its value, and the like.
    (err instanceof TypeError &&
      String((err as { code?: string }).code).startsWith("ERR_PARSE_ARGS")) ||
    // The gateway's JSON parsers (gRPC guardrail and speech bodies) refuse bad input with a 400.
    (err instanceof HttpError && err.status === 400);
  const message =
    err instanceof ConfigError
      ? err.problems.join("; ")
      : err instanceof ConnectError || err instanceof ApiError || err instanceof Error
        ? err.message
        : String(err);
  const line = message.split("\n")[0];
  process.stderr.write(`railgate: ${line}${usage ? " (railgate --help for usage)" : ""}\n`);
  return usage ? 2 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = failure(err);
  },
);
