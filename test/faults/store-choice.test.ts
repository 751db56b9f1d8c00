import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { freePort } from "../kit/free-port.js";
import { Api } from "../kit/http.js";
import { spawnChild } from "../kit/processes.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { startSystemProcess } from "../kit/system-process.js";

const MAIN = fileURLToPath(new URL("../../apps/all-in-one/main.js", import.meta.url));
const SPEECH_MAIN = fileURLToPath(new URL("../../apps/speech/main.js", import.meta.url));

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const jsonLines = (output: string): LogLine[] =>
  output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);

/** `npm start` (the all-in-one entry point as a child process): the store it opens, and says. */
describe("faults: npm start says which store it uses and why", function () {
  this.timeout(120_000);

  it("a Redis that was asked for and does not answer: exit 1 at once, the reason on stderr", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const child = spawnChild(process.execPath, [MAIN], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: nobody,
      RAILGATE_STORE: "redis",
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_LOG_LEVEL: "info",
    });
    const code = await new Promise<number | null>((resolve) =>
      child.process.once("exit", (c) => resolve(c)),
    );
    expect(code, child.output()).to.equal(1);
    expect(child.output()).to.include(
      `Redis at ${nobody} (REDIS_URL) is not reachable: start it, correct the address, or set RAILGATE_STORE=embedded`,
    );
    // Said plainly (no stack), and nothing was served.
    expect(child.output()).to.not.match(/\n\s+at /);
    expect(child.output()).to.not.include("railgate is up");
  });

  it("a split speech process without REDIS_URL: refused at start-up, not started on a store of its own", async () => {
    const child = spawnChild(process.execPath, [SPEECH_MAIN], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      RAILGATE_SPEECH_GRPC_PORT: "0",
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_LOG_LEVEL: "info",
    });
    const code = await new Promise<number | null>((resolve) =>
      child.process.once("exit", (c) => resolve(c)),
    );
    expect(code, child.output()).to.equal(1);
    expect(child.output()).to.include(
      "the speech process has no store: RAILGATE_STORE=auto and neither REDIS_URL nor RAILGATE_REDIS_CLUSTER_NODES is set.",
    );
    expect(child.output()).to.not.include("speech service is up");
  });

  it("RAILGATE_STORE=embedded: the embedded store, announced with its reason, and the system serves", async () => {
    const system = await startSystemProcess("", {
      RAILGATE_STORE: "embedded",
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    try {
      const lines = jsonLines(system.child.output());
      const store = lines.find((l) => l.store === "embedded" && l.reason !== undefined);
      expect(store, system.child.output()).to.include({
        level: 40,
        reason: "RAILGATE_STORE=embedded",
      });
      expect(store?.msg).to.match(
        /^using the EMBEDDED IN-MEMORY STORE \(RAILGATE_STORE=embedded\)/,
      );
      const up = lines.find((l) => l.msg === "railgate is up");
      expect(up).to.include({ store: "memory", storeSetting: "embedded" });
      const res = await new Api(system.baseUrl(), MANAGEMENT_KEY).get("/api/v1/workspaces");
      expect(res.status).to.equal(200);
    } finally {
      await system.child.stop(5_000);
    }
  });
});
