import { expect } from "chai";
import { loadConfig } from "../../platform/config/config.js";
import { traceBodyAttributes } from "../../platform/observability/tracing.js";
import { configProblems } from "../kit/config-problems.js";

describe("tracing: configuration", () => {
  it("is off unless an endpoint or OTEL_TRACES_EXPORTER=otlp says otherwise", () => {
    expect(loadConfig({}).tracing).to.deep.equal({
      exporter: "none",
      endpoint: undefined,
      serviceName: "railgate",
      healthProbes: false,
    });
    const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://jaeger:4318" }).tracing;
    expect(on).to.include({ exporter: "otlp", endpoint: "http://jaeger:4318" });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: "otlp" }).tracing.exporter).to.equal("otlp");
    const off = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://jaeger:4318",
      OTEL_TRACES_EXPORTER: "none",
    });
    expect(off.tracing.exporter).to.equal("none");
    expect(loadConfig({ OTEL_SERVICE_NAME: "speech-eu" }).tracing.serviceName).to.equal(
      "speech-eu",
    );
  });

  it("refuses an unknown exporter and an endpoint that is not an http(s) URL", () => {
    expect(configProblems({ OTEL_TRACES_EXPORTER: "zipkin" })).to.deep.equal([
      'OTEL_TRACES_EXPORTER must be one of otlp, none, got "zipkin"',
    ]);
    expect(configProblems({ OTEL_EXPORTER_OTLP_ENDPOINT: "jaeger:4318" })).to.deep.equal([
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s):// URL",
    ]);
  });
});

describe("tracing: the body's trace object as span attributes", () => {
  it("flattens nested keys with dots and keeps scalars as they are", () => {
    expect(traceBodyAttributes({ a: "x", n: 2, b: { c: true, d: null }, l: [1] })).to.deep.equal({
      "railgate.trace.a": "x",
      "railgate.trace.n": 2,
      "railgate.trace.b.c": true,
      "railgate.trace.b.d": "null",
      "railgate.trace.l": "[1]",
    });
    expect(traceBodyAttributes(undefined)).to.deep.equal({});
  });

  it("takes at most 32 keys, each value cut to 256 characters", () => {
    const many = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`k${i}`, "v".repeat(300)]),
    );
    const attrs = traceBodyAttributes({ nested: many });
    expect(Object.keys(attrs)).to.have.length(32);
    expect(attrs["railgate.trace.nested.k0"]).to.equal("v".repeat(256));
    expect(attrs["railgate.trace.nested.k32"]).to.equal(undefined);
  });
});
