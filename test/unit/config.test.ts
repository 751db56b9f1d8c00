import { expect } from "chai";
import { loadConfig, redactUrl } from "../../platform/config/config.js";
import { configProblems } from "../kit/config-problems.js";

describe("configuration schema", () => {
  it("loads the defaults from an empty environment", () => {
    const c = loadConfig({});
    expect(c.gatewayPorts).to.deep.equal({ global: 8080, europe: 8081, us: 8082 });
    expect(c.maxBodyBytes).to.equal(1_048_576);
    // 15 MiB of reference audio as base64 (20 MiB), and room for the rest of the body.
    expect(c.maxSpeechBodyBytes).to.equal(21 * 1_048_576);
    expect(c.rateLimitPerMinute).to.equal(600);
    expect(c.allowSafetyRetentionGoogle).to.equal(true);
    expect(c.grpcRegion).to.equal("global");
    expect(c.redisCommandTimeoutMs).to.be.greaterThan(0);
    expect(c.shutdownGraceMs).to.equal(25_000);
    expect(c.http.maxConnections).to.be.greaterThan(0);
    expect(c.managementKey).to.equal(undefined);
  });

  it("has circuit breakers and retries on by default, and reads their RAILGATE_SPEECH_* variables", () => {
    expect(loadConfig({}).speechRouting).to.deep.equal({
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
      retries: 2,
      retryBackoffMs: 200,
      retryBackoffMaxMs: 2_000,
      firstByteDeadlineMs: 10_000,
    });
    const c = loadConfig({
      RAILGATE_SPEECH_BREAKER_FAILURES: "0",
      RAILGATE_SPEECH_BREAKER_COOLDOWN_MS: "1000",
      RAILGATE_SPEECH_RETRIES: "4",
      RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS: "5000",
    });
    expect(c.speechRouting).to.include({
      breakerFailures: 0,
      breakerCooldownMs: 1000,
      retries: 4,
      firstByteDeadlineMs: 5000,
    });
    expect(configProblems({ RAILGATE_SPEECH_RETRIES: "11" })).to.deep.equal([
      'RAILGATE_SPEECH_RETRIES must be an integer from 0 to 10, got "11"',
    ]);
    expect(configProblems({ RAILGATE_SPEECH_BREAKER_FAILURES: "-1" })[0]).to.match(
      /^RAILGATE_SPEECH_BREAKER_FAILURES must be an integer from 0 to 1000/,
    );
  });

  it("reads RAILGATE_METRICS_PORT (unset: no metrics listener) and RAILGATE_LOG_FORMAT (json or pretty)", () => {
    expect(loadConfig({}).metricsPort).to.equal(undefined);
    expect(loadConfig({}).logFormat).to.equal("json");
    const c = loadConfig({ RAILGATE_METRICS_PORT: "9464", RAILGATE_LOG_FORMAT: "pretty" });
    expect(c.metricsPort).to.equal(9464);
    expect(c.logFormat).to.equal("pretty");
    expect(configProblems({ RAILGATE_METRICS_PORT: "http" })).to.deep.equal([
      'RAILGATE_METRICS_PORT must be a port number 0..65535, got "http"',
    ]);
    expect(configProblems({ RAILGATE_LOG_FORMAT: "xml" })[0]).to.match(/^RAILGATE_LOG_FORMAT /);
  });

  it("treats empty values as unset (docker-compose passes an unset variable as empty)", () => {
    const c = loadConfig({
      RAILGATE_MANAGEMENT_KEY: "",
      REDIS_URL: "",
      RAILGATE_MAX_BODY_BYTES: " ",
    });
    expect(c.managementKey).to.equal(undefined);
    expect(c.redisUrl).to.equal(undefined);
    expect(c.maxBodyBytes).to.equal(1_048_576);
  });

  it("parses valid values", () => {
    const c = loadConfig({
      RAILGATE_GATEWAY_PORT: "9000",
      RAILGATE_MAX_BODY_BYTES: "2048",
      RAILGATE_RATE_LIMIT_PER_MINUTE: "0",
      RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER: "false",
      RAILGATE_GRPC_REGION: "europe",
      RAILGATE_INTERNAL_TOKEN: "t".repeat(32),
      RAILGATE_REDIS_CLUSTER_NODES: "a:7000, b:7001",
      RAILGATE_HTTP_MAX_CONNECTIONS: "50",
      RAILGATE_SPEECH_ENGINE_WORKERS: "3",
    });
    expect(c.gatewayPorts.global).to.equal(9000);
    expect(c.maxBodyBytes).to.equal(2048);
    expect(c.rateLimitPerMinute).to.equal(0);
    expect(c.allowSafetyRetentionOther).to.equal(false);
    expect(c.grpcRegion).to.equal("europe");
    expect(c.internalToken).to.equal("t".repeat(32));
    expect(c.redisClusterNodes).to.deep.equal(["a:7000", "b:7001"]);
    expect(c.http.maxConnections).to.equal(50);
    expect(c.enginePoolSize).to.equal(3);
    // Per client address: 200 unless set; 0 = no cap (behind a load balancer).
    expect(loadConfig({}).http.maxConnectionsPerAddress).to.equal(200);
    expect(
      loadConfig({ RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: "0" }).http.maxConnectionsPerAddress,
    ).to.equal(0);
    expect(loadConfig({ RAILGATE_EMBEDDED_ENGINE: "off" }).embeddedEngine).to.equal("off");
    expect(loadConfig({}).embeddedEngine).to.equal("auto");
  });

  it("parses RAILGATE_CORS_ORIGINS into the origins browsers send (unset = none)", () => {
    expect(loadConfig({}).corsOrigins).to.deep.equal([]);
    expect(
      loadConfig({
        RAILGATE_CORS_ORIGINS: " HTTPS://App.Example.com:443 , http://localhost:5173,* ",
      }).corsOrigins,
    ).to.deep.equal(["https://app.example.com", "http://localhost:5173", "*"]);
  });

  const refusals: [Record<string, string>, string][] = [
    [
      { RAILGATE_MAX_BODY_BYTES: "1MB" },
      'RAILGATE_MAX_BODY_BYTES must be a positive integer number of bytes, got "1MB"',
    ],
    [
      { RAILGATE_SPEECH_MAX_BODY_BYTES: "0" },
      "RAILGATE_SPEECH_MAX_BODY_BYTES must be a positive integer number of bytes",
    ],
    [
      { RAILGATE_GATEWAY_PORT: "70000" },
      'RAILGATE_GATEWAY_PORT must be a port number 0..65535, got "70000"',
    ],
    [
      { RAILGATE_EMBEDDED_ENGINE: "false" },
      'RAILGATE_EMBEDDED_ENGINE must be one of auto, off, got "false"',
    ],
    [{ RAILGATE_SPEECH_GRPC_PORT: "-1" }, "RAILGATE_SPEECH_GRPC_PORT must be a port number"],
    [
      { RAILGATE_RATE_LIMIT_PER_MINUTE: "lots" },
      "RAILGATE_RATE_LIMIT_PER_MINUTE must be an integer >= 0",
    ],
    [
      { RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: "-1" },
      'RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS must be an integer >= 0 (0 = unlimited), got "-1"',
    ],
    [
      { RAILGATE_TRACE_HEALTH_PROBES: "yes" },
      'RAILGATE_TRACE_HEALTH_PROBES must be "true" or "false", got "yes"',
    ],
    [
      { RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE: "no" },
      'must be "true" or "false", got "no"',
    ],
    [{ RAILGATE_GRPC_REGION: "asia" }, "RAILGATE_GRPC_REGION must be one of global, europe, us"],
    [
      { RAILGATE_LOG_LEVEL: "verbose" },
      "RAILGATE_LOG_LEVEL must be one of fatal, error, warn, info",
    ],
    [{ REDIS_URL: "http://x:6379" }, "REDIS_URL must be a redis:// or rediss:// URL"],
    [
      { RAILGATE_REDIS_CLUSTER_NODES: "a:7000,b" },
      'RAILGATE_REDIS_CLUSTER_NODES must be a comma-separated list of host:port, got "b"',
    ],
    [
      { REDIS_URL: "redis://a:1", RAILGATE_REDIS_CLUSTER_NODES: "a:7000" },
      "RAILGATE_REDIS_CLUSTER_NODES cannot be set together with REDIS_URL",
    ],
    [
      { RAILGATE_STORE: "memory" },
      'RAILGATE_STORE must be one of auto, redis, embedded, got "memory"',
    ],
    [
      { RAILGATE_STORE: "embedded", REDIS_URL: "redis://a:1" },
      'RAILGATE_STORE is "embedded" but REDIS_URL is set: unset one of them',
    ],
    [
      { RAILGATE_STORE: "embedded", RAILGATE_REDIS_CLUSTER_NODES: "a:7000" },
      'RAILGATE_STORE is "embedded" but RAILGATE_REDIS_CLUSTER_NODES is set: unset one of them',
    ],
    [
      { RAILGATE_SPEECH_ENGINE_WORKERS: "1.5" },
      "RAILGATE_SPEECH_ENGINE_WORKERS must be an integer from 1 to 256",
    ],
    [
      { RAILGATE_SHUTDOWN_GRACE_MS: "soon" },
      "RAILGATE_SHUTDOWN_GRACE_MS must be an integer number of milliseconds",
    ],
    [
      { RAILGATE_REDIS_COMMAND_TIMEOUT_MS: "0" },
      "RAILGATE_REDIS_COMMAND_TIMEOUT_MS must be a positive integer number of milliseconds",
    ],
    [
      { RAILGATE_HTTP_HEADERS_TIMEOUT_MS: "5000", RAILGATE_HTTP_REQUEST_TIMEOUT_MS: "1000" },
      "RAILGATE_HTTP_HEADERS_TIMEOUT_MS must not exceed RAILGATE_HTTP_REQUEST_TIMEOUT_MS (1000)",
    ],
    [
      { RAILGATE_GUARDRAIL_GRPC_URL: "guardrail:50051" },
      "RAILGATE_GUARDRAIL_GRPC_URL must be an http(s):// URL",
    ],
    [{ OPENAI_BASE_URL: "ftp://x" }, "OPENAI_BASE_URL must be an http(s):// URL"],
    [
      { RAILGATE_CORS_ORIGINS: "https://a.example,https://b.example/app" },
      'RAILGATE_CORS_ORIGINS must be a comma-separated list of origins (http(s)://host[:port], no path) or *, got "https://b.example/app"',
    ],
    [{ RAILGATE_CORS_ORIGINS: "a.example" }, 'or *, got "a.example"'],
    [{ RAILGATE_CORS_ORIGINS: "ftp://a.example" }, 'or *, got "ftp://a.example"'],
    [{ RAILGATE_CORS_ORIGINS: "https://a.example/" }, 'or *, got "https://a.example/"'],
    [{ RAILGATE_CORS_ORIGINS: "https://a.example," }, 'or *, got ""'],
  ];
  for (const [env, message] of refusals) {
    it(`refuses ${JSON.stringify(env)}`, () => {
      const found = configProblems(env);
      expect(found.join("\n")).to.include(message);
    });
  }

  it("wants RAILGATE_MANAGEMENT_KEY and RAILGATE_INTERNAL_TOKEN of 32+ characters, and never echoes them", () => {
    const secret = "short-secret-0123456789";
    const found = configProblems({
      RAILGATE_MANAGEMENT_KEY: secret,
      RAILGATE_INTERNAL_TOKEN: secret,
    });
    expect(found).to.have.length(2);
    expect(found.join("\n")).to.include(
      "RAILGATE_MANAGEMENT_KEY must be at least 32 characters, got 23",
    );
    expect(found.join("\n")).to.include("RAILGATE_INTERNAL_TOKEN must be at least 32 characters");
    expect(found.join("\n")).to.not.include(secret);
    expect(loadConfig({ RAILGATE_MANAGEMENT_KEY: "k".repeat(32) }).managementKey).to.have.length(
      32,
    );
  });

  it("reports every bad variable at once, and truncates huge values", () => {
    const found = configProblems({
      RAILGATE_MAX_BODY_BYTES: "x".repeat(10_000),
      RAILGATE_GATEWAY_PORT: "http",
    });
    expect(found).to.have.length(2);
    expect(found[0]?.length ?? 0).to.be.lessThan(200);
  });

  it("never echoes a Redis URL it refuses, nor logs one with its password", () => {
    const found = configProblems({ REDIS_URL: "redis//:hunter2@host" });
    expect(found.join("\n")).to.not.include("hunter2");
    expect(redactUrl("redis://user:hunter2@host:6379/0")).to.equal("redis://***:***@host:6379/0");
    expect(redactUrl("redis://:hunter2@host:6379")).to.equal("redis://:***@host:6379");
  });
});
