import {
  ConfigError,
  deprecatedVariables,
  deprecationMessage,
  loadConfig,
  type RailgateConfig,
  StartupRefused,
} from "./config/config.js";
import { unknownVariables } from "./config/env-names.js";
import { flushLogDedupe } from "./observability/log-dedupe.js";
import { configureLogging, logger } from "./observability/logger.js";
import { startMetricsServer } from "./observability/metrics-server.js";
import { configureTracing, shutdownTracing } from "./observability/tracing.js";

/** A component that can stop: `graceMs` is how long in-flight work may take to finish. */
export interface Stoppable {
  close(options?: { graceMs?: number }): Promise<void>;
}

/** Past the grace period, this much more for settling and closing before exiting regardless. */
const CLOSE_MARGIN_MS = 5_000;

/**
 * Loads the configuration, starts a component and runs it until SIGINT or
 * SIGTERM; then drains it: it stops accepting work, lets what is in flight
 * finish within RAILGATE_SHUTDOWN_GRACE_MS, and closes. A second signal, or a drain that
 * overruns, exits at once. A start-up failure (a bad configuration included)
 * exits non-zero with the reason.
 */
export async function runUntilSignal(
  name: string,
  start: (config: RailgateConfig) => Promise<Stoppable>,
) {
  try {
    const config = loadConfig();
    configureLogging(config);
    warnDeprecatedVariables(name);
    warnUnknownVariables(name);
    // Before anything serves, so the first request is traced too (a no-op unless configured).
    configureTracing(config.tracing);
    const component = await start(config);
    // Split processes have no gateway /metrics of their own: RAILGATE_METRICS_PORT serves each its registry.
    const metrics =
      config.metricsPort === undefined
        ? undefined
        : await startMetricsServer(config.metricsPort, config.grpcHost);
    // The port it bound (RAILGATE_METRICS_PORT may be 0): what a scrape config must name.
    if (metrics)
      logger.info({ component: name, metricsPort: metrics.port }, "metrics listener is up");
    const running: Stoppable = {
      close: async (options) => {
        await component.close(options);
        await metrics?.close();
        await shutdownTracing();
      },
    };
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) {
        logger.warn({ signal, component: name }, "second signal: exiting now");
        process.exit(1);
      }
      stopping = true;
      const grace = config.shutdownGraceMs;
      setTimeout(() => {
        logger.error({ component: name }, "shutdown overran its grace period: exiting");
        process.exit(1);
      }, grace + CLOSE_MARGIN_MS).unref();
      // close() stops accepting before its first await: say "draining" only once that is so,
      // so whoever reads the line (an orchestrator, a test) never reaches a listener still open.
      const closing = running.close({ graceMs: grace });
      logger.info({ signal, component: name, graceMs: grace }, "draining, then shutting down");
      await closing;
      // Counts of lines folded in the last window would otherwise go with the process.
      flushLogDedupe();
      logger.info({ component: name }, "stopped");
      process.exit(0);
    };
    process.on("SIGINT", () => void stop("SIGINT"));
    process.on("SIGTERM", () => void stop("SIGTERM"));
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.fatal({ component: name, problems: err.problems }, err.message);
      process.stderr.write(`${err.message}\n`);
    } else if (err instanceof StartupRefused) {
      // The operator's to fix, and the whole story: no stack, said plainly on stderr too.
      logger.fatal({ component: name }, err.message);
      process.stderr.write(`${err.message}\n`);
    } else {
      logger.fatal({ err, component: name }, "failed to start");
    }
    process.exit(1);
  }
}

/** Each old name in use, once, naming the new one (the table in platform/config/config.ts). */
export function warnDeprecatedVariables(component: string, env = process.env): void {
  for (const deprecated of deprecatedVariables(env)) {
    logger.warn(
      { component, variable: deprecated.name, replacement: deprecated.replacement },
      deprecationMessage(deprecated),
    );
  }
}

/** A name that looks like a setting but is none is ignored: say so (by name, never the value). */
function warnUnknownVariables(component: string): void {
  for (const { name, suggestion } of unknownVariables(process.env)) {
    logger.warn(
      { component, variable: name, suggestion },
      suggestion
        ? `unknown environment variable ${name} (ignored): did you mean ${suggestion}?`
        : `unknown environment variable ${name} (ignored): not a Railgate setting (docs/configuration.md)`,
    );
  }
}
