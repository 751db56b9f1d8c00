import { expect } from "chai";
import { FIRST_KEY_COMMANDS } from "../../services/account/operator-key.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { startSystemProcess } from "../kit/system-process.js";

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const WARN = 40;
/** What the operator meant as the management key, under a misspelt name. */
const SECRET = "typo-management-key-0123456789abcdef0123";

/**
 * `npm start` (the all-in-one entry point as a child process) with the management key under a
 * misspelt name: the start-up log names the unknown variable with the name it meant, never its
 * value, and says that no key can be created, with the commands that fix it.
 */
describe("faults: start-up warnings of a misconfigured system", function () {
  this.timeout(120_000);
  let redis: ThrowawayRedis;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it("warns about RAILGATE_MANAGMENT_KEY (did you mean...) and how to mint the first key", async () => {
    const system = await startSystemProcess(redis.url, {
      // Unset (empty is unset), and the value under a misspelt name instead.
      RAILGATE_MANAGEMENT_KEY: "",
      RAILGATE_MANAGMENT_KEY: SECRET,
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    try {
      const output = system.child.output();
      const lines = output
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as LogLine);
      const typo = lines.find((l) => l.variable === "RAILGATE_MANAGMENT_KEY");
      expect(typo, output).to.include({
        level: WARN,
        suggestion: "RAILGATE_MANAGEMENT_KEY",
        msg: "unknown environment variable RAILGATE_MANAGMENT_KEY (ignored): did you mean RAILGATE_MANAGEMENT_KEY?",
      });
      const noKey = lines.find((l) => l.msg.startsWith("RAILGATE_MANAGEMENT_KEY is not set"));
      expect(noKey, output).to.include({ level: WARN });
      expect(noKey?.commands).to.deep.equal([...FIRST_KEY_COMMANDS]);
      expect(noKey?.msg).to.include("openssl rand -hex 32").and.include("/api/v1/keys");
      expect(output).to.not.include(SECRET);
      // And indeed: the misspelt key is no key.
      const res = await new Api(system.baseUrl(), SECRET).post("/api/v1/keys", { name: "k" });
      expect(res.status).to.equal(401);
    } finally {
      await system.child.stop(10_000);
    }
  });
});
