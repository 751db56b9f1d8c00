import type { Server } from "node:net";
import { StartupRefused } from "./config/config.js";

/**
 * Binds `server` to host:port. A port that is taken (or needs privileges) refuses the start with
 * the setting that chose it, e.g. "RAILGATE_GUARDRAIL_GRPC_PORT=50051: port 127.0.0.1:50051 is in use":
 * the operator's fix is that variable, which a bare `listen EADDRINUSE` does not name.
 */
export function listenOn(server: Server, port: number, host: string, variable: string) {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(refusal(err, port, host, variable));
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

function refusal(err: NodeJS.ErrnoException, port: number, host: string, variable: string) {
  const where = `${variable}=${port}: port ${host}:${port}`;
  if (err.code === "EADDRINUSE")
    return new StartupRefused(`${where} is in use: stop what holds it or choose another port`);
  if (err.code === "EACCES")
    return new StartupRefused(
      `${where} needs privileges this process lacks: choose a port above 1023`,
    );
  if (err.code === "EADDRNOTAVAIL")
    return new StartupRefused(`${where} cannot be bound: ${host} is not an address of this host`);
  return err;
}
