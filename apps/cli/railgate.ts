#!/usr/bin/env node
/**
 * Operator CLI (the `railgate` bin). Talks gRPC to the running services
 * (GUARDRAIL_GRPC_URL, default http://127.0.0.1:50051; SPEECH_GRPC_URL,
 * default http://127.0.0.1:50052) as an ordinary caller with the key given by
 * --key or RAILGATE_KEY (else RAILGATE_MANAGEMENT_KEY, the operator's key the
 * services registered at start-up: how the first further keys are minted).
 *
 * Exit codes: 0 done, 1 the call failed or was refused, 2 the command line is
 * wrong (unknown command or flag, missing argument, malformed value).
 */
import { parseArgs } from "node:util";
import { ConnectError } from "@connectrpc/connect";
import { HttpError } from "../../gateway/http-error.js";
import { cliClients } from "./clients.js";
import type { Command, Options } from "./command.js";
import { accountCommands } from "./commands/accounts.js";
import { assignmentCommands } from "./commands/assignments.js";
import { guardrailCommands } from "./commands/guardrails.js";
import { speechCommands } from "./commands/speech.js";
import { render } from "./output.js";
import { UsageError } from "./usage-error.js";

const COMMANDS: Command[] = [
  ...guardrailCommands,
  ...assignmentCommands,
  ...speechCommands,
  ...accountCommands,
];

const COMMON: Options = {
  key: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

function synopsis(c: Command): string {
  const opts = Object.entries(c.options ?? {}).map(([name, o]) => {
    const flag = o.type === "boolean" ? `--${name}` : `--${name} ${name.toUpperCase()}`;
    return c.required?.includes(name) ? flag : `[${flag}]`;
  });
  return [c.words, ...(c.args ?? []), ...opts].join(" ");
}

const USAGE = [
  "usage: railgate <command> [options]",
  "",
  ...COMMANDS.flatMap((c) => [`  ${synopsis(c)}`, `      ${c.summary}`]),
  "",
  "options:     --key KEY  the caller's key (default $RAILGATE_KEY, else $RAILGATE_MANAGEMENT_KEY)",
  "             --json     print JSON instead of a table",
  "environment: GUARDRAIL_GRPC_URL (default http://127.0.0.1:50051)",
  "             SPEECH_GRPC_URL (default http://127.0.0.1:50052)",
].join("\n");

/** The command whose words start argv, the longest match winning. */
function findCommand(argv: string[]): Command | undefined {
  return COMMANDS.filter((c) => {
    const words = c.words.split(" ");
    return words.every((w, i) => argv[i] === w);
  }).sort((a, b) => b.words.length - a.words.length)[0];
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

async function main(argv: string[]): Promise<number> {
  const command = findCommand(argv);
  if (!command) {
    if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    throw new UsageError(`unknown command "${argv.filter((a) => !a.startsWith("-")).join(" ")}"`);
  }
  const parsed = parseArgs({
    args: argv.slice(command.words.split(" ").length),
    options: { ...COMMON, ...command.options },
    allowPositionals: true,
    strict: true,
  });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    process.stdout.write(`usage: railgate ${synopsis(command)}\n  ${command.summary}\n`);
    return 0;
  }
  for (const name of command.required ?? []) {
    if (values[name] === undefined) throw new UsageError(`${command.words}: --${name} is required`);
  }
  checkArgs(command, parsed.positionals);
  const key =
    (values.key as string | undefined) ??
    (process.env.RAILGATE_KEY || process.env.RAILGATE_MANAGEMENT_KEY || undefined);
  const out = await command.run({
    clients: cliClients(key),
    values,
    args: parsed.positionals,
  });
  process.stdout.write(`${render(out, values.json === true)}\n`);
  return 0;
}

/** One line on stderr, and the exit code that says whose mistake it was. */
function failure(err: unknown): number {
  const usage =
    err instanceof UsageError ||
    // parseArgs' own errors: unknown flag, a flag missing its value, and the like.
    (err instanceof TypeError &&
      String((err as { code?: string }).code).startsWith("ERR_PARSE_ARGS")) ||
    // The gateway's JSON parsers (guardrail and speech bodies) refuse bad input with a 400.
    (err instanceof HttpError && err.status === 400);
  const message =
    err instanceof ConnectError ? err.message : err instanceof Error ? err.message : String(err);
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
