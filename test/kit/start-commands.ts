import { readFileSync } from "node:fs";

/**
 * The node flags each deployment passes its processes, read from the files that deploy them:
 * the bench starts processes with them (measured as deployed) and test/unit/start-flags.test.ts
 * keeps them in step.
 */

/** A file of the repository, by its path from the root (this module runs from dist/test/kit). */
export function readRepoFile(path: string): string {
  return readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
}

/** The node flags before the one-process system's entry point in package.json's start script. */
export function npmStartNodeFlags(): string[] {
  const pkg = JSON.parse(readRepoFile("package.json")) as { scripts: { start: string } };
  const m = /\bnode((?: --\S+)*) dist\/apps\/all-in-one\/main\.js/.exec(pkg.scripts.start);
  if (!m)
    throw new Error(`package.json's start script does not run the system: ${pkg.scripts.start}`);
  return (m[1] ?? "").trim().split(" ").filter(Boolean);
}

/**
 * Per service, the node flags before `dist/apps/<service>/main.js` in every exec-form `command:`
 * of a file (docker-compose.yml; the Helm template, whose one entry is `{{ $entry }}`).
 */
export function serviceCommandFlags(path: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const m of readRepoFile(path).matchAll(
    /command: (\["node",[^\]\n]*"dist\/apps\/([^/"]+)\/main\.js"\])/g,
  )) {
    const argv = JSON.parse(m[1] ?? "[]") as string[];
    found.set(m[2] ?? "", argv.slice(1, -1));
  }
  return found;
}
