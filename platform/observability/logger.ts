import { type DestinationStream, pino } from "pino";
import pretty from "pino-pretty";
import { type LoggingSettings, loggingSettings } from "../config/config.js";
import { errorForLog, logFieldsForLog } from "./log-fields.js";

/**
 * Every module logs through this logger, so it exists before the configuration is loaded: it
 * starts with RAILGATE_LOG_LEVEL and RAILGATE_LOG_FORMAT as the configuration schema reads them (its default for
 * a value it refuses, so that loadConfig can refuse it with a clear message), and
 * configureLogging applies the validated configuration once it is (platform/lifecycle.ts).
 */
const initial = loggingSettings(process.env);

/**
 * RAILGATE_LOG_FORMAT=pretty: coloured, one-line-per-event output for a human at a terminal (pino-pretty,
 * in-process so `npm start` needs no pipe). json: JSON lines, for a log collector.
 */
function targetFor(format: LoggingSettings["logFormat"]): DestinationStream {
  if (format === "pretty") return pretty({ colorize: true, sync: true });
  // Synchronous, as pino's own default: a fatal line before exit is never lost.
  return pino.destination({ dest: 1, sync: true });
}

let format = initial.logFormat;
let target = targetFor(format);

/**
 * Where every log line goes. An indirection (one property read per line) so a test can
 * capture the lines the process writes, through the real loggers (setLogDestination).
 */
const destination: DestinationStream = {
  write: (line: string) => target.write(line),
};

/** Sends every later log line to `stream`; returns a function that restores the previous one. */
export function setLogDestination(stream: DestinationStream): () => void {
  const previous = target;
  target = stream;
  return () => {
    target = previous;
  };
}

/** One structured logger for every component; children carry the component name. */
export const logger = pino(
  {
    level: initial.logLevel,
    base: { service: "railgate" },
    // No line carries a protobuf message or descriptor whole, nor a stack where it tells nothing.
    serializers: { err: (err: unknown) => errorForLog(err) },
    formatters: { log: logFieldsForLog },
  },
  destination,
);

export function componentLogger(component: string) {
  return logger.child({ component });
}

/** Applies the validated RAILGATE_LOG_LEVEL and RAILGATE_LOG_FORMAT (a process's start-up, after loadConfig). */
export function configureLogging(settings: LoggingSettings): void {
  logger.level = settings.logLevel;
  if (settings.logFormat !== format) {
    format = settings.logFormat;
    target = targetFor(format);
  }
}
