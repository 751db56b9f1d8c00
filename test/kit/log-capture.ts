import { logger, setLogDestination } from "../../platform/observability/logger.js";

/** A log line as pino wrote it. */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface LogCapture {
  /** Every line written since the capture began, parsed. */
  lines(): LogLine[];
  /** The lines that carry this request id. */
  forRequest(requestId: string): LogLine[];
  /** Sends lines where they went before, at the level they had. */
  restore(): void;
}

/**
 * Captures what this process logs, through the real loggers (platform/observability/logger.ts), at `level`
 * or above whatever RAILGATE_LOG_LEVEL the run has (child loggers follow the root's level): for
 * tests that check what an operator reads, e.g. that a failure's detail is logged with
 * the request id while the client reads none of it.
 */
export function captureLogs(level = "info"): LogCapture {
  const raw: string[] = [];
  const restoreDestination = setLogDestination({ write: (line: string) => void raw.push(line) });
  const previousLevel = logger.level;
  logger.level = level;
  const lines = () =>
    raw.flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
  return {
    lines,
    forRequest: (requestId) => lines().filter((l) => l.requestId === requestId),
    restore: () => {
      logger.level = previousLevel;
      restoreDestination();
    },
  };
}
