import type { Cluster, Command, Redis } from "ioredis";

/** ioredis' words when its `commandTimeout` timer fires (it has no error class for it). */
const TIMED_OUT = "Command timed out";

type Send = (command: Command, ...rest: unknown[]) => unknown;

/**
 * Lets a reply that has already arrived win over the command time-out.
 *
 * ioredis fails a command when its `commandTimeout` timer fires, and Node runs expired timers
 * before it reads sockets. So after the event loop stalls for longer than the time-out (a long
 * GC, a large batch into the embedded PGlite, a saturated host), a command whose reply sits
 * unread in the socket failed as "timed out", a 503, though Redis answered in time. Here that
 * rejection waits one turn of the loop: `setImmediate` runs after the poll phase, which reads the
 * reply and resolves the command first. A Redis that really did not answer fails one turn later.
 *
 * Only the time-out is deferred; every other rejection (connection closed, a Redis error) passes
 * at once. A command sent again through the same client (a Cluster's redirection) is wrapped
 * twice, which costs a second turn and nothing else.
 */
export function readRepliesBeforeTimeouts(client: Redis | Cluster): void {
  const send = client.sendCommand.bind(client) as Send;
  const patient: Send = (command, ...rest) => {
    const reject = command.reject;
    command.reject = (err) => {
      if (err.message !== TIMED_OUT) {
        reject(err);
        return;
      }
      setImmediate(() => {
        if (!command.isResolved) reject(err);
      });
    };
    return send(command, ...rest);
  };
  client.sendCommand = patient as typeof client.sendCommand;
}
