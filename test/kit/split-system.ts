import { randomBytes } from "node:crypto";
import type { RegionName } from "../../domain/enums.js";
import { appEntry, type ProcessKind, upLine } from "./app-entries.js";
import { childDatabaseEnv } from "./databases.js";
import { freePort } from "./free-port.js";
import { type Child, makeTempDir, spawnChild } from "./processes.js";
import { MANAGEMENT_KEY } from "./system.js";
import {
  type ChildOptions,
  gatewayPortEnv,
  logsInfo,
  pickedGatewayPorts,
  waitForHealth,
} from "./system-process.js";
import { TcpBalancer } from "./tcp-balancer.js";

/** The three processes of a split deployment (docker-compose's containers), on loopback. */
export interface SplitSystem {
  gateway: Child;
  guardrail: Child;
  /** The speech process now running (a new one after `restartSpeech`); the first replica. */
  speech: Child;
  /**
   * Starts the (first) speech process again on its port with the same environment, as an
   * orchestrator restarts a killed container; resolves once it serves.
   */
  restartSpeech(): Promise<Child>;
  /** Every speech replica and its gRPC port. */
  speeches: { child: Child; port: number }[];
  /** With `speechReplicas` > 1: the TCP balancer the gateway reaches them through. */
  speechBalancer?: TcpBalancer;
  /** The guardrail process's gRPC port. */
  guardrailPort: number;
  baseUrl(region?: RegionName): string;
  /** The guardrail process's gRPC address (AccountService, GuardrailService): direct callers. */
  guardrailGrpcUrl: string;
  /**
   * SIGKILLs the gateway (requests in flight are cut) and starts a new one on the same ports
   * (`gateway` is then the new process); resolves once it is healthy.
   */
  restartGateway(): Promise<void>;
  /** The services' own GET /metrics (RAILGATE_METRICS_PORT), when asked for with `metrics: true`. */
  metricsUrls: { guardrail?: string; speech?: string };
  stop(): Promise<void>;
}

/** The port in a gRPC process's "is up" line. */
async function grpcPortOf(child: Child, kind: "guardrail" | "speech"): Promise<number> {
  const line = await child.waitForLine(upLine(kind), 60_000);
  return (JSON.parse(line) as { grpcPort: number }).grpcPort;
}

/** The URL of a process's RAILGATE_METRICS_PORT listener, from its "metrics listener is up" line. */
async function metricsUrlOf(child: Child): Promise<string> {
  const line = await child.waitForLine(/"msg":"metrics listener is up"/, 60_000);
  return `http://127.0.0.1:${(JSON.parse(line) as { metricsPort: number }).metricsPort}/metrics`;
}

/**
 * `node dist/apps/{control-plane,speech,gateway}/main.js` as three child processes against the given
 * Redis, as docker-compose runs them: each service on a port it picks (0) and reports, the
 * gateway pointed at those with the shared service credential, so a test can freeze one
 * (SIGSTOP) or kill it. Resolves once the gateway's /healthz answers 200 (both services serve).
 * `env` goes to all three (a catalog file, a deadline); the embedded engine is off unless asked.
 * `speechReplicas` > 1 starts that many speech processes behind one round-robin TCP balancer
 * (as a Kubernetes Service's ClusterIP), which the gateway is pointed at.
 */
export async function startSplitSystem(
  redisUrl: string,
  env: Record<string, string> = {},
  options: { metrics?: boolean; speechReplicas?: number } & ChildOptions = {},
): Promise<SplitSystem> {
  const logLevel = options.logLevel ?? "info";
  // Above info no process says what it bound: every port is picked here (see ChildOptions).
  const picked = logsInfo(logLevel)
    ? undefined
    : {
        gateway: await pickedGatewayPorts(),
        guardrail: await freePort(),
        speech: await freePort(),
        moreSpeech: await Promise.all(
          Array.from({ length: (options.speechReplicas ?? 1) - 1 }, () => freePort()),
        ),
      };
  const common = {
    PATH: process.env.PATH,
    // Suites share one database with a Redis each: a fresh Redis is not an emptied one.
    RAILGATE_CONFIG_REFILL: "off",
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
    RAILGATE_INTERNAL_TOKEN: randomBytes(32).toString("hex"),
    RAILGATE_HOST: "127.0.0.1",
    RAILGATE_GRPC_HOST: "127.0.0.1",
    ...gatewayPortEnv(picked?.gateway),
    RAILGATE_GUARDRAIL_GRPC_PORT: String(picked?.guardrail ?? 0),
    RAILGATE_SPEECH_GRPC_PORT: String(picked?.speech ?? 0),
    RAILGATE_EMBEDDED_ENGINE: "off",
    RAILGATE_SPEECH_ENGINE_WORKERS: "1",
    // One request log for the three processes: the run's throwaway PostgreSQL database.
    ...(await childDatabaseEnv(env)),
    // The ports are read from info lines, unless they were picked here.
    RAILGATE_LOG_LEVEL: logLevel,
  };
  const started: Child[] = [];
  let speechBalancer: TcpBalancer | undefined;
  const spawn = (name: ProcessKind, extra: Record<string, string> = {}) => {
    const child = spawnChild(
      options.node ?? process.execPath,
      [...(options.nodeArgs ?? []), appEntry(name)],
      {
        ...common,
        // With DATABASE_URL "" (PGlite, one process's database) each opens a folder of its own.
        RAILGATE_DATA_DIR: makeTempDir(`railgate-${name}-`),
        ...extra,
      },
    );
    started.push(child);
    return child;
  };
  try {
    // Each service its own metrics port, picked by the process and read from its line.
    const metricsEnv: Record<string, string> = options.metrics
      ? { RAILGATE_METRICS_PORT: "0" }
      : {};
    const guardrail = spawn("guardrail", metricsEnv);
    const speech = spawn("speech", metricsEnv);
    const more = (
      picked?.moreSpeech ?? Array.from({ length: (options.speechReplicas ?? 1) - 1 })
    ).map((port) =>
      spawn("speech", { ...metricsEnv, RAILGATE_SPEECH_GRPC_PORT: String(port ?? 0) }),
    );
    const [guardrailPort, speechPort] = picked
      ? [picked.guardrail, picked.speech]
      : await Promise.all([grpcPortOf(guardrail, "guardrail"), grpcPortOf(speech, "speech")]);
    const speeches = [{ child: speech, port: speechPort }];
    for (const [i, child] of more.entries()) {
      const port = picked?.moreSpeech[i] ?? (await grpcPortOf(child, "speech"));
      speeches.push({ child, port });
    }
    if (speeches.length > 1) speechBalancer = await TcpBalancer.start(speeches.map((s) => s.port));
    const metricsUrls: SplitSystem["metricsUrls"] = {};
    if (options.metrics) {
      const [g, s] = await Promise.all([metricsUrlOf(guardrail), metricsUrlOf(speech)]);
      Object.assign(metricsUrls, { guardrail: g, speech: s });
    }
    const gatewayEnv = {
      RAILGATE_GUARDRAIL_GRPC_URL: `http://127.0.0.1:${guardrailPort}`,
      RAILGATE_SPEECH_GRPC_URL: speechBalancer?.url ?? `http://127.0.0.1:${speechPort}`,
    };
    let gateway = spawn("gateway", gatewayEnv);
    const ports =
      picked?.gateway ??
      (
        JSON.parse(await gateway.waitForLine(/"msg":"gateway is up"/, 60_000)) as {
          gateway: Record<RegionName, number>;
        }
      ).gateway;
    const baseUrl = (region: RegionName = "global") => `http://127.0.0.1:${ports[region]}`;
    await waitForHealth(baseUrl(), gateway);
    let currentSpeech = speech;
    const system: SplitSystem = {
      gateway,
      guardrail,
      get speech() {
        return currentSpeech;
      },
      restartSpeech: async () => {
        const again = spawn("speech", {
          ...metricsEnv,
          RAILGATE_SPEECH_GRPC_PORT: String(speechPort),
        });
        currentSpeech = again;
        speeches[0] = { child: again, port: speechPort };
        await again.waitForLine(/"msg":"speech service is up"/, 60_000);
        await waitForHealth(baseUrl(), gateway);
        return again;
      },
      speeches,
      speechBalancer,
      guardrailPort,
      baseUrl,
      guardrailGrpcUrl: gatewayEnv.RAILGATE_GUARDRAIL_GRPC_URL,
      metricsUrls,
      restartGateway: async () => {
        const old = gateway.process;
        if (old.exitCode === null && old.signalCode === null) {
          const exited = new Promise((resolve) => old.once("exit", resolve));
          old.kill("SIGKILL");
          await exited;
        }
        gateway = spawn("gateway", { ...gatewayEnv, ...gatewayPortEnv(ports) });
        system.gateway = gateway;
        await waitForHealth(baseUrl(), gateway);
      },
      stop: async () => {
        // A frozen process cannot take its SIGTERM: thaw it first.
        for (const c of started) c.process.kill("SIGCONT");
        await gateway.stop(5_000);
        await Promise.all(started.filter((c) => c !== gateway).map((c) => c.stop(5_000)));
        await speechBalancer?.close();
      },
    };
    return system;
  } catch (err) {
    for (const c of started) c.process.kill("SIGCONT");
    await Promise.all(started.map((c) => c.stop(2_000)));
    await speechBalancer?.close();
    throw err;
  }
}
