import { expect } from "chai";
import { Counter, Histogram, Registry } from "prom-client";
import { counterChild, histogramChild } from "../../platform/observability/metric-children.js";

/** The same metrics twice, one fed through prom-client's children, one through ours. */
function pair() {
  const make = (registry: Registry) => ({
    calls: new Counter({
      name: "calls_total",
      help: "h",
      labelNames: ["route", "code"] as const,
      registers: [registry],
    }),
    time: new Histogram({
      name: "time_seconds",
      help: "h",
      labelNames: ["route", "code"] as const,
      buckets: [0.001, 0.01, 0.1, 1],
      registers: [registry],
    }),
  });
  const slowRegistry = new Registry();
  const fastRegistry = new Registry();
  return { slowRegistry, fastRegistry, slow: make(slowRegistry), fast: make(fastRegistry) };
}

const VALUES = [0.0005, 0.001, 0.005, 0.05, 0.5, 1, 7, 0];

describe("metric children (platform/observability/metric-children.ts)", () => {
  it("expose exactly what prom-client's own children do, and take the direct path", async () => {
    const { slowRegistry, fastRegistry, slow, fast } = pair();
    const labels = [
      { route: "/a/:id", code: "200" },
      { route: "/b", code: "404" },
    ];
    for (const l of labels) {
      const count = counterChild(fast.calls, l);
      const time = histogramChild(fast.time, l);
      for (const v of VALUES) {
        slow.calls.labels(l).inc();
        slow.time.labels(l).observe(v);
        count.inc();
        time.observe(v);
      }
      expect(count.direct).to.equal(true);
      expect(time.direct).to.equal(true);
    }
    expect(await fastRegistry.metrics()).to.equal(await slowRegistry.metrics());
  });

  it("count again through prom-client after a reset or a removed series, nothing lost", async () => {
    const { slowRegistry, fastRegistry, slow, fast } = pair();
    const l = { route: "/a", code: "200" };
    const count = counterChild(fast.calls, l);
    const time = histogramChild(fast.time, l);
    const both = (v: number) => {
      slow.calls.labels(l).inc();
      slow.time.labels(l).observe(v);
      count.inc();
      time.observe(v);
    };
    both(0.002);
    both(0.02);
    for (const m of [slow.calls, fast.calls, slow.time, fast.time]) m.reset();
    expect(count.direct).to.equal(false);
    both(0.2);
    fast.calls.remove(l);
    slow.calls.remove(l);
    fast.time.remove(l);
    slow.time.remove(l);
    both(2);
    both(0.0001);
    expect(count.direct).to.equal(true);
    expect(await fastRegistry.metrics()).to.equal(await slowRegistry.metrics());
  });
});
