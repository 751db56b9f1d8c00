import { expect } from "chai";
import { appEntry } from "../kit/app-entries.js";
import { makeTempDir, removeTempDir, spawnChild } from "../kit/processes.js";

const FORMER_ENTRY = appEntry("guardrail").replace(/control-plane(?=[/\\]main\.js$)/, "guardrail");
const DEPRECATION = "dist/apps/guardrail/main.js is deprecated";

/** The control plane's own entry, and the former one that still starts it for one release. */
describe("control plane: its entry, and the deprecated guardrail entry", function () {
  this.timeout(120_000);
  let dir = "";

  before(() => {
    dir = makeTempDir("railgate-control-plane-");
  });

  after(() => {
    if (dir) removeTempDir(dir);
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH,
    HOME: dir,
    RAILGATE_DATA_DIR: dir,
    RAILGATE_GRPC_HOST: "127.0.0.1",
    RAILGATE_GUARDRAIL_GRPC_PORT: "0",
    RAILGATE_LOG_LEVEL: "info",
    ...extra,
  });

  it("the former entry warns once that it is deprecated, then serves as the control plane", async () => {
    expect(FORMER_ENTRY).to.match(/apps[/\\]guardrail[/\\]main\.js$/);
    const child = spawnChild(process.execPath, [FORMER_ENTRY], env({ RAILGATE_STORE: "embedded" }));
    try {
      const up = JSON.parse(await child.waitForLine(/"msg":"control plane is up"/, 60_000)) as {
        grpcPort: number;
      };
      expect(up.grpcPort).to.be.greaterThan(0);
      const warnings = child
        .output()
        .split("\n")
        .filter((l) => l.includes(DEPRECATION));
      expect(warnings, child.output()).to.have.length(1);
      expect(JSON.parse(warnings[0] ?? "{}")).to.include({
        level: 40,
        replacement: "dist/apps/control-plane/main.js",
      });
    } finally {
      await child.stop(10_000);
    }
  });

  it("the former entry refuses what the control plane refuses: no store, exit 1", async () => {
    const child = spawnChild(process.execPath, [FORMER_ENTRY], env());
    const code = await new Promise<number | null>((resolve) =>
      child.process.once("exit", (c) => resolve(c)),
    );
    expect(code, child.output()).to.equal(1);
    expect(child.output()).to.include("the control-plane process has no store");
    expect(child.output()).to.not.include("control plane is up");
  });

  it("the control plane's own entry says nothing of a deprecation", async () => {
    const child = spawnChild(process.execPath, [appEntry("guardrail")], env());
    const code = await new Promise<number | null>((resolve) =>
      child.process.once("exit", (c) => resolve(c)),
    );
    expect(code, child.output()).to.equal(1);
    expect(child.output()).to.include("the control-plane process has no store");
    expect(child.output()).to.not.include(DEPRECATION);
  });
});
