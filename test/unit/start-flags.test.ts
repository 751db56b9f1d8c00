import { expect } from "chai";
import { npmStartNodeFlags, readRepoFile, serviceCommandFlags } from "../kit/start-commands.js";

const SYSTEM = "dist/apps/all-in-one/main.js";

/** The node flags of the image's default command (exec form), before the entry point. */
function dockerfileFlags(): string[] {
  const cmd = /^CMD (\[.*\])$/m.exec(readRepoFile("Dockerfile"));
  expect(cmd, "the Dockerfile's CMD").to.not.equal(null);
  const argv = JSON.parse(cmd?.[1] ?? "[]") as string[];
  expect(argv[0]).to.equal("node");
  expect(argv.at(-1)).to.equal(SYSTEM);
  return argv.slice(1, -1);
}

describe("the one-process system starts the same way everywhere", () => {
  it("npm start and the image's default command pass the same node flags", () => {
    expect(dockerfileFlags()).to.deep.equal(npmStartNodeFlags());
  });

  it("one V8 helper thread (Node's four compete with the request thread on 2 cores)", () => {
    expect(npmStartNodeFlags()).to.include("--v8-pool-size=1");
  });

  it("a full collection lets the old generation grow 2.5x (fewer full collections at 1 connection)", () => {
    expect(npmStartNodeFlags()).to.include("--heap-growing-percent=150");
  });
});

describe("the split services start the same way everywhere", () => {
  it("docker-compose and the Helm chart pass the same node flags to every service", () => {
    const compose = serviceCommandFlags("docker-compose.yml");
    expect([...compose.keys()].sort()).to.deep.equal(["control-plane", "gateway", "speech"]);
    const helm = serviceCommandFlags("deploy/helm/railgate/templates/deployments.yaml");
    expect([...helm.keys()]).to.deep.equal(["{{ $entry }}"]);
    const flags = helm.get("{{ $entry }}");
    for (const [service, own] of compose) expect(own, service).to.deep.equal(flags);
  });

  it("a full collection lets the old generation grow 2.5x, as in npm start", () => {
    for (const [service, flags] of serviceCommandFlags("docker-compose.yml"))
      expect(flags, service).to.include("--heap-growing-percent=150");
  });
});
