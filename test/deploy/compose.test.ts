import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { parse } from "yaml";
import { REPO } from "./helm-render.js";

/**
 * docker-compose.yml scales: no service but the balancer publishes a host port, and the
 * balancer's HAProxy configuration is valid and points at every listener. Checked without a
 * Docker engine: Debian's docker-compose (`config`) and haproxy (`-c`), installed by .ci/run.
 */

const run = promisify(execFile);

async function tool(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    if (e.code === "ENOENT") {
      throw new Error(`${command} is not installed: apt-get install docker-compose haproxy`);
    }
    return { code: Number(e.code), out: (e.stdout ?? "") + (e.stderr ?? "") };
  }
}

const TOKEN = { RAILGATE_INTERNAL_TOKEN: "t".repeat(40), POSTGRES_PASSWORD: "pg-secret" };

/** An empty env file: a developer's own .env must not change what is checked. */
const scratch = mkdtempSync(join(tmpdir(), "railgate-compose-"));
const EMPTY_ENV = join(scratch, "empty.env");
writeFileSync(EMPTY_ENV, "");
after(() => rmSync(scratch, { recursive: true, force: true }));

/** `docker-compose config` of a compose file (ours by default), with no .env file read. */
function composeConfig(
  file = "docker-compose.yml",
  env: Record<string, string> = TOKEN,
  quiet = false,
) {
  const args = ["--env-file", EMPTY_ENV, "--project-directory", REPO, "-f", file, "config"];
  return tool("docker-compose", quiet ? [...args, "-q"] : args, env);
}

describe("docker-compose: replicas behind a load balancer", function () {
  this.timeout(60_000);

  let services: Record<string, { ports?: { published: number; target: number }[] } & object>;
  before(async () => {
    const { code, out } = await composeConfig();
    expect(code, out).to.equal(0);
    services = parse(out).services;
  });

  it("docker-compose config -q accepts the file", async () => {
    const { code, out } = await composeConfig("docker-compose.yml", TOKEN, true);
    expect(code, out).to.equal(0);
  });

  it("... and refuses it without the internal token, or with a bad port", async () => {
    const noToken = await composeConfig(
      "docker-compose.yml",
      { POSTGRES_PASSWORD: "pg-secret" },
      true,
    );
    expect(noToken.code).to.not.equal(0);
    expect(noToken.out).to.match(/set RAILGATE_INTERNAL_TOKEN/);

    // No default database password: a blank one is refused by name, not quietly replaced.
    const blank: Record<string, string>[] = [{}, { POSTGRES_PASSWORD: "" }];
    for (const password of blank) {
      const env = { RAILGATE_INTERNAL_TOKEN: TOKEN.RAILGATE_INTERNAL_TOKEN, ...password };
      const noPassword = await composeConfig("docker-compose.yml", env, true);
      expect(noPassword.code).to.not.equal(0);
      expect(noPassword.out).to.match(/set POSTGRES_PASSWORD/);
    }

    const broken = join(scratch, "docker-compose.yml");
    const text = readFileSync(join(REPO, "docker-compose.yml"), "utf8");
    writeFileSync(broken, text.replace('- "8080:8080" # region global', '- "eighty:8080"'));
    const refused = await composeConfig(broken, TOKEN, true);
    expect(refused.code).to.not.equal(0);
    expect(refused.out).to.match(/services\.lb\.ports contains an invalid type/);
  });

  it("only the balancer publishes host ports (8080-8082): every other service can scale", () => {
    const publishing = Object.entries(services)
      .filter(([, s]) => (s.ports ?? []).length > 0)
      .map(([name]) => name);
    expect(publishing).to.deep.equal(["lb"]);
    expect(services.lb?.ports?.map((p) => [p.published, p.target])).to.deep.equal([
      [8080, 8080],
      [8081, 8081],
      [8082, 8082],
    ]);
    for (const [name, s] of Object.entries(services)) {
      expect(s, name).to.not.have.property("container_name");
    }
    expect(services).to.include.keys("gateway", "guardrail", "speech", "redis", "postgres");
  });

  it("the gateways behind it run without a per-address cap (every connection comes from the balancer)", () => {
    const gateway = services.gateway as { environment: Record<string, string> };
    expect(gateway.environment.RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS).to.equal("0");
  });

  it("the HAProxy configuration is valid and spreads each listener over every gateway replica", async () => {
    const cfg = "deploy/haproxy/haproxy.cfg";
    const { code, out } = await tool("haproxy", ["-c", "-f", cfg]);
    expect(code, out).to.equal(0);
    const text = readFileSync(join(REPO, cfg), "utf8");
    for (const port of [8080, 8081, 8082]) {
      expect(text).to.match(new RegExp(`^\\s*bind :${port}$`, "m"));
      expect(text).to.match(new RegExp(`^\\s*server-template gateway \\d+ gateway:${port}$`, "m"));
    }
    expect(text).to.match(/^\s*balance roundrobin$/m);
    expect(text).to.match(/^\s*nameserver dns 127\.0\.0\.11:53$/m);
  });

  it("haproxy -c refuses a broken configuration (the check can fail)", async () => {
    const broken = join(scratch, "haproxy.cfg");
    const text = readFileSync(join(REPO, "deploy/haproxy/haproxy.cfg"), "utf8");
    writeFileSync(broken, text.replace("balance roundrobin", "balance round-robin-please"));
    const { code, out } = await tool("haproxy", ["-c", "-f", broken]);
    expect(code).to.not.equal(0);
    expect(out).to.match(/balance only supports .roundrobin./);
  });
});
