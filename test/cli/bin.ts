import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const PACKAGE = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
};
export const BIN = join(repoRoot, PACKAGE.bin.railgate ?? "");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built bin as an operator runs it: a process of its own, with only `env` (and PATH). */
export function runBin(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env } },
      (err, stdout, stderr) =>
        resolve({
          code: err ? Number(err.code) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

/** A command line refused before any call: exit 2, one line on stderr naming the problem. */
export function expectUsageError(run: Run, mentions: string): void {
  expect(run.code, run.stderr).to.equal(2);
  expect(run.stdout).to.equal("");
  expect(run.stderr.trimEnd().split("\n")).to.have.length(1);
  expect(run.stderr).to.match(/^railgate: /);
  expect(run.stderr).to.contain(mentions);
}
