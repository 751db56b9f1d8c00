import { expect } from "chai";
import {
  CONFIG_DEFAULTS,
  configSchema,
  loadConfig,
  loggingSettings,
  RENAMED_VARIABLES,
} from "../../platform/config/config.js";
import { unknownVariables } from "../../platform/config/env-names.js";
import { warnDeprecatedVariables } from "../../platform/lifecycle.js";
import { configProblems } from "../kit/config-problems.js";
import { captureLogs } from "../kit/log-capture.js";

/** The deprecation lines a start-up with `env` logs. */
function deprecationLines(env: NodeJS.ProcessEnv) {
  const logs = captureLogs("warn");
  try {
    warnDeprecatedVariables("test", env);
  } finally {
    logs.restore();
  }
  return logs.lines();
}

describe("configuration: deprecated names", () => {
  it("maps every old name to a name the schema reads, under RAILGATE_", () => {
    const schema = new Set(Object.keys(configSchema.shape));
    for (const [old, replacement] of Object.entries(RENAMED_VARIABLES)) {
      expect(schema.has(replacement), `${old} -> ${replacement}`).to.equal(true);
      expect(schema.has(old), `${old} is no longer read by the schema`).to.equal(false);
      expect(replacement).to.match(/^RAILGATE_/);
    }
  });

  it("names every setting of Railgate's own under RAILGATE_, standard names aside", () => {
    const standard = new Set(["DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"]);
    const others = Object.keys(configSchema.shape).filter(
      (name) => !name.startsWith("RAILGATE_") && !name.startsWith("OTEL_") && !standard.has(name),
    );
    expect(others).to.deep.equal([]);
  });

  it("reads an old name's value and warns once, naming the new name", () => {
    const env = { MAX_BODY_BYTES: "2048", GUARDRAIL_GRPC_PORT: "6000" };
    const config = loadConfig(env);
    expect(config.maxBodyBytes).to.equal(2048);
    expect(config.guardrailGrpcPort).to.equal(6000);
    const lines = deprecationLines(env);
    expect(lines.map((l) => l.variable)).to.deep.equal(["GUARDRAIL_GRPC_PORT", "MAX_BODY_BYTES"]);
    const body = lines.find((l) => l.variable === "MAX_BODY_BYTES");
    expect(body?.msg).to.equal(
      "environment variable MAX_BODY_BYTES is deprecated: rename it RAILGATE_MAX_BODY_BYTES",
    );
    expect(body?.replacement).to.equal("RAILGATE_MAX_BODY_BYTES");
  });

  it("lets the new name win when both are set, and the warning says so", () => {
    const env = { RAILGATE_MAX_BODY_BYTES: "4096", MAX_BODY_BYTES: "2048" };
    expect(loadConfig(env).maxBodyBytes).to.equal(4096);
    // A bad value under the ignored old name is not the operator's problem any more.
    expect(
      configProblems({ RAILGATE_MAX_BODY_BYTES: "4096", MAX_BODY_BYTES: "1MB" }),
    ).to.deep.equal([]);
    const lines = deprecationLines(env);
    expect(lines).to.have.length(1);
    expect(lines[0]?.msg).to.equal(
      "environment variable MAX_BODY_BYTES is deprecated and ignored: RAILGATE_MAX_BODY_BYTES is set too and wins; unset MAX_BODY_BYTES",
    );
  });

  it("renames the request log's retention beside the audit log's", () => {
    const config = loadConfig({ RAILGATE_LOG_RETENTION_DAYS: "7", AUDIT_LOG_RETENTION_DAYS: "90" });
    expect(config.logRetentionDays).to.equal(7);
    expect(config.auditRetentionDays).to.equal(90);
    expect(deprecationLines({ RAILGATE_LOG_RETENTION_DAYS: "7" })[0]?.replacement).to.equal(
      "RAILGATE_REQUEST_LOG_RETENTION_DAYS",
    );
  });

  it("treats an empty old or new name as unset, as every setting", () => {
    expect(
      loadConfig({ RAILGATE_MAX_BODY_BYTES: "", MAX_BODY_BYTES: "2048" }).maxBodyBytes,
    ).to.equal(2048);
    expect(deprecationLines({ MAX_BODY_BYTES: "" })).to.deep.equal([]);
    expect(loadConfig({ MAX_BODY_BYTES: " " }).maxBodyBytes).to.equal(CONFIG_DEFAULTS.maxBodyBytes);
  });

  it("refuses a bad value under the name it was given", () => {
    expect(configProblems({ MAX_BODY_BYTES: "1MB" })).to.deep.equal([
      'MAX_BODY_BYTES (now RAILGATE_MAX_BODY_BYTES) must be a positive integer number of bytes, got "1MB"',
    ]);
    expect(configProblems({ RAILGATE_MAX_BODY_BYTES: "1MB" })).to.deep.equal([
      'RAILGATE_MAX_BODY_BYTES must be a positive integer number of bytes, got "1MB"',
    ]);
  });

  it("gives the logger the old log level too, the new one first", () => {
    expect(loggingSettings({ LOG_LEVEL: "debug" }).logLevel).to.equal("debug");
    expect(loggingSettings({ LOG_LEVEL: "debug", RAILGATE_LOG_LEVEL: "error" }).logLevel).to.equal(
      "error",
    );
  });

  it("knows old names (no unknown-variable warning) and points typos of them at the new name", () => {
    expect(unknownVariables({ MAX_BODY_BYTES: "2048", SPEECH_RETRIES: "1" })).to.deep.equal([]);
    expect(unknownVariables({ GATEWAY_EU_PORTT: "8081" })).to.deep.equal([
      { name: "GATEWAY_EU_PORTT", suggestion: "RAILGATE_GATEWAY_EU_PORT" },
    ]);
  });
});
