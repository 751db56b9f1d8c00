import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import type { CatalogEndpoint } from "../../../domain/catalog/types.js";
import { SPEECH_ROUTING_DEFAULTS } from "../../../platform/config/config.js";
import { registry } from "../../../platform/observability/metrics.js";
import { Failover } from "../../../services/speech/routing/failover.js";

/** The value of a gauge's series for one model and provider in the registry's exposition. */
async function exposed(name: string, model: string, provider: string): Promise<number | undefined> {
  const text = await registry.metrics();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}{model="${model}",provider="${provider}"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function* chunks(n: number, size: number, gapMs: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < n; i++) {
    if (i > 0) await sleep(gapMs);
    yield new Uint8Array(size);
  }
}

describe("speech routing: the endpoint gauges read the fail-over's measurements when scraped", () => {
  it("shows each measured endpoint's moving averages, and their later changes, at the next scrape", async () => {
    const model = `gauge-test/${Date.now()}`;
    const endpoint = { provider: "p1" } as CatalogEndpoint;
    const failover = new Failover(SPEECH_ROUTING_DEFAULTS);
    const serve = async (firstByteDelayMs: number) => {
      const opened = await failover.open({
        modelId: model,
        endpoints: [endpoint],
        attempt: async () => {
          await sleep(firstByteDelayMs);
          return { stream: chunks(3, 1_000, 5), extra: undefined };
        },
        signal: new AbortController().signal,
        deadline: performance.now() + 10_000,
      });
      for await (const _ of opened.stream) {
        // read to the end: the stream's throughput is measured when it completes
      }
      opened.detach();
    };
    expect(await exposed("railgate_speech_endpoint_ttfb_seconds", model, "p1")).to.equal(undefined);

    await serve(30);
    const ttfb = await exposed("railgate_speech_endpoint_ttfb_seconds", model, "p1");
    const measure = failover.health(model, "p1");
    expect(measure.ttfbMs).to.be.a("number");
    expect(ttfb).to.be.closeTo((measure.ttfbMs as number) / 1000, 1e-9);
    const throughput = await exposed(
      "railgate_speech_endpoint_throughput_bytes_per_second",
      model,
      "p1",
    );
    expect(throughput).to.be.closeTo(measure.throughputBps as number, 1e-6);

    // A slower first byte moves the average; the next scrape shows the new value.
    await serve(120);
    const later = await exposed("railgate_speech_endpoint_ttfb_seconds", model, "p1");
    expect(later).to.be.greaterThan(ttfb as number);
    expect(later).to.be.closeTo((failover.health(model, "p1").ttfbMs as number) / 1000, 1e-9);
  });
});
