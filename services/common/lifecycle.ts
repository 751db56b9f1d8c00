import { logger } from "./logger.js";

/** Runs a component until SIGINT/SIGTERM, then closes it; a start-up failure exits non-zero. */
export async function runUntilSignal(
  name: string,
  start: () => Promise<{ close(): Promise<void> }>,
) {
  try {
    const running = await start();
    const stop = async (signal: string) => {
      logger.info({ signal, component: name }, "shutting down");
      await running.close();
      process.exit(0);
    };
    process.once("SIGINT", () => void stop("SIGINT"));
    process.once("SIGTERM", () => void stop("SIGTERM"));
  } catch (err) {
    logger.fatal({ err, component: name }, "failed to start");
    process.exit(1);
  }
}
