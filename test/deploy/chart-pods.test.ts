import { execFile, execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { freePort } from "../kit/free-port.js";
import { type Child, makeTempDir, removeTempDir, spawnChild } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { waitForHealth } from "../kit/system-process.js";
import {
  container,
  containerEnv,
  find,
  type K8sObject,
  REPO,
  REQUIRED_VALUES,
  renderChart,
} from "./helm-render.js";

const run = promisify(execFile);

/**
 * The chart's pods, run as local processes: each component started with exactly the
 * environment its container gets with mTLS on (one certificate for both roles, as the chart
 * asks), rewritten only where a pod differs from this machine: the mounted files' paths, the
 * Services' names (localhost: no cluster DNS here; the certificate names both), free ports
 * instead of the fixed ones (other suites run at the same time), loopback instead of 0.0.0.0,
 * the test's Redis and PostgreSQL database (the kit's throwaway ones).
 */

const CHART_PORTS = [8080, 8081, 8082, 50051, 50052, 9464, 9465];

/** A CA and one certificate for services and gateway, in the Secret's layout. */
function makeChartPki(dir: string): void {
  const openssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out"].concat([
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=railgate-test-ca",
    ]),
  );
  openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "tls.key", "-out", "tls.csr"].concat([
      "-subj",
      "/CN=railgate",
    ]),
  );
  writeFileSync(
    join(dir, "tls.ext"),
    "subjectAltName=DNS:rg-railgate-guardrail,DNS:rg-railgate-speech,DNS:localhost\n" +
      "extendedKeyUsage=serverAuth,clientAuth\n",
  );
  openssl(
    ["x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key"].concat([
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "2",
      "-extfile",
      "tls.ext",
    ]),
  );
}

describe("Helm chart: the pods' settings run Railgate (mTLS on the hop)", function () {
  this.timeout(120_000);

  let objects: K8sObject[];
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let dir: string;
  const ports = new Map<number, number>();
  const children: Child[] = [];
  let gatewayUrl: string;

  /** A container's environment as this machine runs it (see the file's comment). */
  function localEnv(component: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, chartValue] of Object.entries(containerEnv(objects, component))) {
      let value = chartValue
        .replace("/etc/railgate/grpc-tls", join(dir, "pki"))
        .replace("/etc/railgate/catalog", join(dir, "catalog"))
        .replace(/\/\/rg-railgate-(guardrail|speech):/, "//localhost:");
      for (const [from, to] of ports) {
        if (value === String(from)) value = String(to);
        value = value.replace(new RegExp(`:${from}$`), `:${to}`);
      }
      env[name] = value;
    }
    if (env.REDIS_URL) env.REDIS_URL = redis.url;
    if (env.DATABASE_URL) env.DATABASE_URL = database.url as string;
    return {
      ...env,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      RAILGATE_HOST: "127.0.0.1",
      RAILGATE_GRPC_HOST: "127.0.0.1",
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_LOG_LEVEL: "info",
    };
  }

  function start(component: string): Child {
    const [node, ...args] = container(objects, component).command as string[];
    expect(node).to.equal("node");
    // The pod's node flags as given, the script (last) from this checkout.
    const script = args.pop() ?? "";
    const child = spawnChild(process.execPath, [...args, join(REPO, script)], localEnv(component), {
      cwd: dir,
    });
    children.push(child);
    return child;
  }

  before(async () => {
    objects = await renderChart(REQUIRED_VALUES, {
      grpcTls: { enabled: true, secretName: "railgate-grpc-tls" },
    });
    [redis, database] = await Promise.all([startRedis(), createTestDatabase("postgres")]);
    dir = makeTempDir("railgate-chart-pods-");
    execFileSync("mkdir", ["-p", join(dir, "pki"), join(dir, "catalog")]);
    makeChartPki(join(dir, "pki"));
    writeFileSync(
      join(dir, "catalog/catalog.json"),
      find(objects, "ConfigMap", "-catalog").data["catalog.json"],
    );
    for (const port of CHART_PORTS) ports.set(port, await freePort());
    const guardrail = start("guardrail");
    const speech = start("speech");
    await Promise.all([
      guardrail.waitForLine(/"msg":"control plane is up"/, 60_000),
      speech.waitForLine(/"msg":"speech service is up"/, 60_000),
    ]);
    const gateway = start("gateway");
    await gateway.waitForLine(/"msg":"gateway is up"/, 60_000);
    gatewayUrl = `http://127.0.0.1:${ports.get(8080)}`;
    await waitForHealth(gatewayUrl, gateway);
  });

  after(async () => {
    await Promise.all(children.map((c) => c.stop(5_000)));
    await redis?.stop();
    await database?.dispose();
    if (dir) removeTempDir(dir);
  });

  it("the gateway reaches both services over mTLS: /healthz 200 on each regional listener", async () => {
    for (const [port, region] of [
      [8080, "global"],
      [8081, "europe"],
      [8082, "us"],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${ports.get(port)}/healthz`);
      expect(res.status, region).to.equal(200);
      expect(await res.json()).to.deep.equal({ status: "ok", region });
    }
  });

  it("the Secret's management key is a management key (through the gateway, over the hop)", async () => {
    const auth = { Authorization: `Bearer ${REQUIRED_VALUES.secrets.managementKey}` };
    const res = await fetch(`${gatewayUrl}/api/v1/keys`, { headers: auth });
    expect(res.status, await res.clone().text()).to.equal(200);
    const refused = await fetch(`${gatewayUrl}/api/v1/keys`, {
      headers: { Authorization: `Bearer ${"x".repeat(40)}` },
    });
    expect(refused.status).to.equal(401);
  });

  it("the services' readiness probe command (exec, under mTLS) passes in the pod, and fails without the pod's certificate", async () => {
    for (const component of ["guardrail", "speech"]) {
      const [, script, ...args] = container(objects, component).readinessProbe.exec
        .command as string[];
      const chartPort = Number(new URL(args[1] as string).port);
      const url = `https://localhost:${ports.get(chartPort)}`;
      const argv = [join(REPO, script as string), args[0] as string, url];
      const env = localEnv(component);
      await run(process.execPath, argv, { env, cwd: dir });
      const {
        RAILGATE_GRPC_TLS_CERT: _c,
        RAILGATE_GRPC_TLS_KEY: _k,
        RAILGATE_GRPC_TLS_CA: _a,
        ...plain
      } = env;
      const failed = await run(process.execPath, argv, { env: plain, cwd: dir }).then(
        () => 0,
        (err: { code: number }) => err.code,
      );
      expect(failed, component).to.equal(1);
    }
  });

  it("the metrics ports answer without a key", async () => {
    for (const port of [9464, 9465]) {
      const res = await fetch(`http://127.0.0.1:${ports.get(port)}/metrics`);
      expect(res.status, String(port)).to.equal(200);
      expect(await res.text()).to.match(/^# HELP /m);
    }
  });
});
