import { expect } from "chai";
import { CircuitBreakers } from "../../../services/speech/routing/breaker.js";
import { EndpointStats } from "../../../services/speech/routing/endpoint-stats.js";

describe("circuit breaker per endpoint", () => {
  let now = 0;
  const states: string[] = [];
  const breakers = () => {
    now = 0;
    states.length = 0;
    return new CircuitBreakers({
      failures: 3,
      cooldownMs: 1000,
      now: () => now,
      onState: (_key, s) => states.push(s),
    });
  };

  it("stays closed below the threshold, and a success resets the count", () => {
    const b = breakers();
    b.failed("e");
    b.failed("e");
    b.succeeded("e");
    b.failed("e");
    b.failed("e");
    expect(b.state("e")).to.equal("closed");
    expect(b.acquire("e")).to.deep.equal({ allowed: true, probe: false });
  });

  it("opens at the threshold, skips during the cool-down, then lets exactly one probe through", () => {
    const b = breakers();
    for (let i = 0; i < 3; i++) b.failed("e");
    expect(b.state("e")).to.equal("open");
    const gate = b.acquire("e");
    expect(gate.allowed).to.equal(false);
    if (!gate.allowed)
      expect(gate.reason).to.match(/open: 3 consecutive failures, cooling down 1 s more/);
    now = 1000;
    expect(b.acquire("e")).to.deep.equal({ allowed: true, probe: true });
    expect(b.state("e")).to.equal("half_open");
    const other = b.acquire("e");
    expect(other.allowed, "a second request while the probe runs").to.equal(false);
    b.succeeded("e");
    expect(b.state("e")).to.equal("closed");
    expect(states).to.deep.equal(["open", "half_open", "closed"]);
  });

  it("a failed probe opens it for a fresh cool-down; a released probe lets the next one probe", () => {
    const b = breakers();
    for (let i = 0; i < 3; i++) b.failed("e");
    now = 1000;
    b.acquire("e");
    b.failed("e");
    expect(b.state("e")).to.equal("open");
    now = 1999;
    expect(b.acquire("e").allowed).to.equal(false);
    now = 2000;
    expect(b.acquire("e")).to.deep.equal({ allowed: true, probe: true });
    b.released("e");
    expect(b.acquire("e")).to.deep.equal({ allowed: true, probe: true });
  });

  it("never opens with failures 0 (breakers off)", () => {
    const b = new CircuitBreakers({ failures: 0, cooldownMs: 1000 });
    for (let i = 0; i < 100; i++) b.failed("e");
    expect(b.acquire("e")).to.deep.equal({ allowed: true, probe: false });
    expect(b.state("e")).to.equal("closed");
  });
});

describe("live endpoint measurements", () => {
  it("keep a moving average of time to first byte and of throughput", () => {
    const s = new EndpointStats();
    expect(s.get("e")).to.deep.equal({});
    s.firstByte("e", 100);
    expect(s.get("e").ttfbMs).to.equal(100);
    s.firstByte("e", 200);
    expect(s.get("e").ttfbMs).to.be.closeTo(130, 1e-9);
    s.streamed("e", 48_000, 1000);
    expect(s.get("e").throughputBps).to.equal(48_000);
    // A stream that came in one piece (no time after its first byte) says nothing.
    s.streamed("e", 48_000, 0);
    expect(s.get("e").throughputBps).to.equal(48_000);
  });
});
