import { type DestinationStream, pino } from "pino";
import pretty from "pino-pretty";

/**
 * An unknown LOG_LEVEL must not crash the import of this module: start at
 * "info" so that the configuration schema can refuse it with a clear message.
 */
const requested = process.env.LOG_LEVEL || "info";
const level = requested in pino.levels.values || requested === "silent" ? requested : "info";

/**
 * LOG_FORMAT=pretty: coloured, one-line-per-event output for a human at a terminal (pino-pretty,
 * in-process so `npm start` needs no pipe). Anything else: JSON lines, for a log collector.
 */
function defaultTarget(): DestinationStream {
  if (process.env.LOG_FORMAT === "pretty") return pretty({ colorize: true, sync: true });
  // Synchronous, as pino's own default: a fatal line before exit is never lost.
  return pino.destination({ dest: 1, sync: true });
}

let target = defaultTarget();

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
    level,
    base: { service: "railgate" },
  },
  destination,
);

export function componentLogger(component: string) {
  return logger.child({ component });
}
