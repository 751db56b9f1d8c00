import { loadConfig } from "./common/config.js";
import { logger } from "./common/logger.js";
import { startSystem } from "./system.js";

try {
  const system = await startSystem(loadConfig());
  const stop = async (signal: string) => {
    logger.info({ signal }, "shutting down");
    await system.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
} catch (err) {
  logger.fatal({ err }, "railgate failed to start");
  process.exit(1);
}
