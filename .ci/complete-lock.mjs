// npm ci insists that every optional platform package (biome, buf) of every OS
// is in package-lock.json, but a registry mirror that only carries this
// platform's packages makes `npm install` leave the others out. This adds the
// missing entries with their os/cpu, so npm ci skips them on this machine
// instead of failing. Idempotent. Usage: node .ci/complete-lock.mjs [package-lock.json]
import { readFileSync, writeFileSync } from "node:fs";

const path = process.argv[2] ?? "package-lock.json";
const lock = JSON.parse(readFileSync(path, "utf8"));
const packages = lock.packages;
const added = [];
for (const meta of Object.values(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[key]) continue;
    const m = /(android|darwin|linux|win32|freebsd)-(arm64|x64|armv7|ia32)(-musl)?/.exec(dep);
    if (!m) continue;
    packages[key] = {
      version,
      cpu: [m[2] === "armv7" ? "arm" : m[2]],
      os: [m[1]],
      ...(m[3] ? { libc: ["musl"] } : {}),
      optional: true,
    };
    added.push(dep);
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) =>
    a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0,
  ),
);
lock.packages = sorted;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
if (added.length > 0) console.log(`complete-lock: added ${added.join(", ")}`);
