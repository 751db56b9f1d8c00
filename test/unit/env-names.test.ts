import { expect } from "chai";
import { configSchema } from "../../platform/config/config.js";
import {
  closestKnown,
  editDistance,
  KNOWN_VARIABLES,
  unknownVariables,
} from "../../platform/config/env-names.js";

describe("configuration: unknown environment variables", () => {
  it("measures edit distance", () => {
    expect(editDistance("", "")).to.equal(0);
    expect(editDistance("abc", "abc")).to.equal(0);
    expect(editDistance("abc", "")).to.equal(3);
    expect(editDistance("MANAGMENT", "MANAGEMENT")).to.equal(1);
    expect(editDistance("LOG_LEVLE", "LOG_LEVEL")).to.equal(2);
    expect(editDistance("kitten", "sitting")).to.equal(3);
  });

  it("suggests the closest known name for a typo under a prefix of ours", () => {
    expect(closestKnown("RAILGATE_MANAGMENT_KEY")).to.deep.equal({
      name: "RAILGATE_MANAGEMENT_KEY",
      distance: 1,
    });
    expect(
      unknownVariables({ RAILGATE_MANAGMENT_KEY: "secret", GATEWAY_UE_PORT: "8082" }),
    ).to.deep.equal([
      { name: "GATEWAY_UE_PORT", suggestion: "RAILGATE_GATEWAY_US_PORT" },
      { name: "RAILGATE_MANAGMENT_KEY", suggestion: "RAILGATE_MANAGEMENT_KEY" },
    ]);
  });

  it("names an unknown variable under a prefix of ours even with nothing close to suggest", () => {
    expect(unknownVariables({ REDIS_HOST: "redis", SPEECH_WORKERS: "2" })).to.deep.equal([
      { name: "REDIS_HOST" },
      { name: "SPEECH_WORKERS" },
    ]);
  });

  it("warns under shared prefixes (OTEL_, LOG_, ...) only for a near miss of a name we read", () => {
    expect(
      unknownVariables({
        LOG_LEVLE: "debug",
        OTEL_EXPORTER_OTLP_ENDPIONT: "http://collector:4318",
        // Standard OpenTelemetry SDK variables, and the rest of a usual environment.
        OTEL_EXPORTER_OTLP_HEADERS: "x=1",
        OTEL_RESOURCE_ATTRIBUTES: "a=b",
        OTEL_METRICS_EXPORTER: "none",
        OTEL_TRACES_SAMPLER: "always_on",
        OPENAI_ORG_ID: "org",
        PATH: "/usr/bin",
        HOME: "/home/node",
        HOSTNAME: "abc",
        NODE_ENV: "production",
        NODE_VERSION: "22.0.0",
      }),
    ).to.deep.equal([
      { name: "LOG_LEVLE", suggestion: "RAILGATE_LOG_LEVEL" },
      { name: "OTEL_EXPORTER_OTLP_ENDPIONT", suggestion: "OTEL_EXPORTER_OTLP_ENDPOINT" },
    ]);
  });

  it("never warns about a name it reads, HTTP_PROXY, or Kubernetes and Docker service links", () => {
    const everyKnown = Object.fromEntries(KNOWN_VARIABLES.map((n) => [n, "x"]));
    expect(unknownVariables(everyKnown)).to.deep.equal([]);
    expect(KNOWN_VARIABLES).to.include.members([
      ...Object.keys(configSchema.shape),
      "RAILGATE_KEY",
      "RAILGATE_CATALOG_PATH",
    ]);
    expect(
      unknownVariables({
        HTTP_PROXY: "http://proxy:3128",
        REDIS_PORT: "tcp://10.0.0.7:6379",
        REDIS_SERVICE_HOST: "10.0.0.7",
        REDIS_SERVICE_PORT: "6379",
        REDIS_PORT_6379_TCP: "tcp://10.0.0.7:6379",
        REDIS_PORT_6379_TCP_ADDR: "10.0.0.7",
        RAILGATE_GATEWAY_SERVICE_PORT_HTTP: "8080",
        RAILGATE_GATEWAY_PORT_8080_TCP_PROTO: "tcp",
      }),
    ).to.deep.equal([]);
    // The same shape with a value that is no service link is a setting someone meant.
    expect(unknownVariables({ REDIS_PORT: "6379" })).to.deep.equal([
      { name: "REDIS_PORT", suggestion: "REDIS_URL" },
    ]);
  });
});
