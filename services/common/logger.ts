import { pino } from "pino";

/**
 * An unknown LOG_LEVEL must not crash the import of this module: start at
 * "info" so that the configuration schema can refuse it with a clear message.
 */
const requested = process.env.LOG_LEVEL || "info";
const level = requested in pino.levels.values || requested === "silent" ? requested : "info";

/** One structured logger for every component; children carry the component name. */
export const logger = pino({
  level,
  base: { service: "railgate" },
});

export function componentLogger(component: string) {
  return logger.child({ component });
}
