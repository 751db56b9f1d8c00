import { pino } from "pino";

/** One structured logger for every component; children carry the component name. */
export const logger = pino({
  level: process.env.LOG_LEVEL || "info",
  base: { service: "railgate" },
});

export function componentLogger(component: string) {
  return logger.child({ component });
}
