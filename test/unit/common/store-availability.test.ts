import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { guardStore, isStoreUnavailable } from "../../../store/store-availability.js";

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

  it("answers 503 for the parts a store opens (policy documents, audio clips) as for the store", async () => {
    const timedOut = () => Promise.reject(new Error("Command timed out"));
    const store = guardStore({
      read: timedOut,
      openPart: () => ({ read: timedOut, name: "part" }),
    });
    for (const call of [() => store.read(), () => store.openPart().read()]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code).to.equal(Code.Unavailable);
    }
    expect(store.openPart().name).to.equal("part");
  });
});
