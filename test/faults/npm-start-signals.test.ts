import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { expect } from "chai";
import { pollUntil } from "../kit/poll.js";
import { type Child, makeTempDir, spawnChild } from "../kit/processes.js";

/** Whether nothing listens on 127.0.0.1:port (this test can bind it). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** `pid`'s descendants: the server, whether the shell exec'd it or (wrongly) forked it. */
function descendantsOf(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    // ps exits 1 when there is none.
  }
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm start` as an operator runs it (and a process manager stops it): SIGTERM to npm's pid
 * reaches the server, which drains and exits, so npm exits and no node child is left holding
 * the ports.
 */
describe("faults: npm start hands SIGTERM to the server", function () {
  // npm start builds first: up to date after the test build, but a cold one takes a while.
  this.timeout(300_000);
  let npm: Child | undefined;
  let servers: number[] = [];

  after(() => {
    if (npm && alive(npm.pid)) servers = [...servers, ...descendantsOf(npm.pid)];
    for (const pid of servers) if (alive(pid)) process.kill(pid, "SIGKILL");
  });

  it("drains and exits, leaving no process on its ports", async () => {
    // Every port 0: the server picks free ones and says which (a port picked here first could
    // be taken by another lane's process before the server binds it).
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      RAILGATE_STORE: "embedded",
      RAILGATE_DATA_DIR: makeTempDir("railgate-npm-start-"),
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_LOG_LEVEL: "info",
      RAILGATE_GATEWAY_PORT: "0",
      RAILGATE_GATEWAY_EU_PORT: "0",
      RAILGATE_GATEWAY_US_PORT: "0",
      RAILGATE_GUARDRAIL_GRPC_PORT: "0",
      RAILGATE_SPEECH_GRPC_PORT: "0",
    };
    const root = new URL("../../../", import.meta.url).pathname;
    npm = spawnChild("npm", ["start"], env, { cwd: root });
    const started = npm;
    const up = JSON.parse(await started.waitForLine(/"msg":"railgate is up"/, 240_000)) as {
      gateway: { global: number; europe: number; us: number };
      guardrailGrpc: number;
      speechGrpc: number;
    };
    const ports = {
      RAILGATE_GATEWAY_PORT: up.gateway.global,
      RAILGATE_GATEWAY_EU_PORT: up.gateway.europe,
      RAILGATE_GATEWAY_US_PORT: up.gateway.us,
      RAILGATE_GUARDRAIL_GRPC_PORT: up.guardrailGrpc,
      RAILGATE_SPEECH_GRPC_PORT: up.speechGrpc,
    };
    const health = await pollUntil(
      () =>
        fetch(`http://127.0.0.1:${ports.RAILGATE_GATEWAY_PORT}/healthz`)
          .then((r) => r.status)
          .catch(() => 0),
      (status) => status === 200 || started.process.exitCode !== null,
      2_400,
      100,
    );
    expect(health, `npm start never became healthy:\n${npm.output().slice(-3000)}`).to.equal(200);
    servers = descendantsOf(npm.pid);
    expect(servers, "npm's descendants").to.have.length.greaterThan(0);

    const exited = new Promise<number | null>((resolve) =>
      started.process.once("exit", (code) => resolve(code)),
    );
    process.kill(npm.pid, "SIGTERM");
    expect(await exited, npm.output().slice(-3000)).to.equal(0);
    expect(npm.output()).to.match(/draining, then shutting down/);
    const stillRunning = await pollUntil(
      async () => servers.filter(alive),
      (pids) => pids.length === 0,
    );
    expect(stillRunning, "npm's descendants left running").to.deep.equal([]);
    for (const [variable, port] of Object.entries(ports))
      expect(await portIsFree(port), `${variable}=${port} still held`).to.equal(true);
  });
});
