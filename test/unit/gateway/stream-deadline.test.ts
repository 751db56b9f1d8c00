import { expect } from "chai";
import { StreamDeadline, TIMED_OUT } from "../../../gateway/stream-deadline.js";
import { sleep } from "../../kit/poll.js";

/** A value after `ms` (a message of a stream that takes that long to arrive). */
const arriving = <T>(ms: number, value: T) => sleep(ms).then(() => value);

describe("gateway: StreamDeadline (the speech stream's waits)", () => {
  it("answers what arrives in time, and never expires while messages keep coming", async () => {
    let expired = 0;
    const deadline = new StreamDeadline(() => expired++);
    // 12 waits of 40 ms under a 150 ms limit: together far longer than one limit, each well
    // within it. One timer for the whole stream must not mistake the total for a wait.
    for (let i = 0; i < 12; i++) {
      expect(await deadline.within(arriving(40, i), 150)).to.equal(i);
    }
    deadline.close();
    expect(expired).to.equal(0);
  });

  it("does not count the time between waits (a slow client being written to)", async () => {
    let expired = 0;
    const deadline = new StreamDeadline(() => expired++);
    expect(await deadline.within(arriving(10, "a"), 100)).to.equal("a");
    await sleep(250);
    expect(await deadline.within(arriving(10, "b"), 100)).to.equal("b");
    deadline.close();
    expect(expired).to.equal(0);
  });

  it("answers TIMED_OUT once a wait outlasts its limit, runs onExpire once, and stays expired", async () => {
    let expired = 0;
    const deadline = new StreamDeadline(() => expired++);
    expect(await deadline.within(arriving(10, 1), 100)).to.equal(1);
    const never = new Promise<number>(() => {});
    expect(await deadline.within(never, 100)).to.equal(TIMED_OUT);
    expect(expired).to.equal(1);
    expect(await deadline.within(arriving(1, 2), 100)).to.equal(TIMED_OUT);
    expect(expired).to.equal(1);
    deadline.close();
  });

  it("takes each wait's own limit (the first message's, then the idle one)", async () => {
    const deadline = new StreamDeadline(() => {});
    // A timer armed for a 300 ms first wait must not let a 50 ms idle wait run to 300 ms.
    expect(await deadline.within(arriving(10, "start"), 300)).to.equal("start");
    const started = performance.now();
    expect(await deadline.within(new Promise(() => {}), 50)).to.equal(TIMED_OUT);
    expect(performance.now() - started).to.be.below(300);
    deadline.close();
  });

  it("passes a failure of the stream through", async () => {
    const deadline = new StreamDeadline(() => {});
    const failing = arriving(5, null).then(() => {
      throw new Error("stream failed");
    });
    let caught: unknown;
    try {
      await deadline.within(failing, 100);
    } catch (err) {
      caught = err;
    }
    expect((caught as Error).message).to.equal("stream failed");
    deadline.close();
  });
});
