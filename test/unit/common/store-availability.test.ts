import { expect } from "chai";
import { isStoreUnavailable } from "../../../platform/store-availability.js";

/** An error shaped as ioredis raises it (it has few error classes: names and messages tell). */
function redisError(message: string, name = "Error"): Error {
  const err = new Error(message);
  err.name = name;
  return err;
}

describe("unit: what counts as the store being away", () => {
  it("counts a Redis Cluster failing over (its primary gone, slots moving) as away, not as a bug", () => {
    for (const err of [
      redisError(
        "Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down",
      ),
      redisError("CLUSTERDOWN The cluster is down", "ReplyError"),
      redisError("TRYAGAIN Multiple keys request during rehashing of slot", "ReplyError"),
      redisError("Connection is closed."),
      redisError("Failed to refresh slots cache."),
      redisError("", "ClusterAllFailedError"),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }),
    ]) {
      expect(isStoreUnavailable(err), err.message || err.name).to.equal(true);
    }
  });

  it("leaves refused commands and bugs alone: they stay 500s", () => {
    for (const err of [
      redisError("WRONGTYPE Operation against a key holding the wrong kind of value", "ReplyError"),
      redisError("ERR Error running script", "ReplyError"),
      new TypeError("cannot read properties of undefined"),
    ]) {
      expect(isStoreUnavailable(err), err.message).to.equal(false);
    }
    expect(isStoreUnavailable("CLUSTERDOWN")).to.equal(false);
  });
});
