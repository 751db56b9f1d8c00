import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../../../test/system-packages.sh", import.meta.url));

/** What the script answered: its exit code and what it wrote on stderr. */
async function check(env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run("/bin/sh", [SCRIPT], { env });
    return { code: 0, stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe("npm run test:all's first step: the system packages its suites need (test/system-packages.sh)", () => {
  it("names every missing package and the command that installs them, and fails", async () => {
    const empty = mkdtempSync(join(tmpdir(), "railgate-no-tools-"));
    try {
      const got = await check({ PATH: empty, CHROMIUM_PATH: join(empty, "chromium") });
      expect(got.code).to.equal(1);
      const packages = "redis-server redis-tools openssl chromium prometheus ffmpeg";
      expect(got.stderr).to.include(
        `npm run test:all needs system packages that are missing: ${packages}`,
      );
      expect(got.stderr).to.match(
        new RegExp(`sudo apt-get install -y ${packages}( postgresql)?\\n`),
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("takes a PostgreSQL server named by RAILGATE_TEST_POSTGRES_URL for the postgresql package", async () => {
    const empty = mkdtempSync(join(tmpdir(), "railgate-no-tools-"));
    try {
      const got = await check({
        PATH: empty,
        CHROMIUM_PATH: join(empty, "chromium"),
        RAILGATE_TEST_POSTGRES_URL: "postgres://postgres@db.example:5432/postgres",
      });
      expect(got.stderr).to.not.include("postgresql");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("passes silently on this machine, which has them all", async () => {
    expect(await check(process.env)).to.deep.equal({ code: 0, stderr: "" });
  });
});
