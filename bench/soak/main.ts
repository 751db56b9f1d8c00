/**
 * `npm run soak`: the split topology, several replicas of each process on Redis and PostgreSQL,
 * under steady mixed load while processes and Redis nodes are killed or frozen, then the
 * invariants of DESIGN.md's "Any process may die" checked on what the clients were told.
 * Exits 1 when any check fails. Settings: bench/soak/config.ts (docs/failures.md).
 */
import { Chaos } from "./chaos.js";
import {
  type CheckResult,
  checkAuditTrail,
  checkCredits,
  checkDuplicateIds,
  checkKeySpend,
  checkRefusals,
  checkRequestLog,
  checkReservations,
} from "./checks.js";
import { collect, type Holdings, registryExists } from "./collect.js";
import { loadSoakConfig } from "./config.js";
import { ErrorLines } from "./error-lines.js";
import { SoakLoad } from "./load.js";
import type { CallObservation } from "./observations.js";
import { renderChecks, renderTotals } from "./report.js";
import { startSoakSystem } from "./system.js";
import { createWorld } from "./world.js";

function runChecks(calls: CallObservation[], h: Holdings, boundMs: number): CheckResult[] {
  return [
    checkRefusals(calls),
    checkAuditTrail(calls, h.events),
    checkRequestLog(calls, h.records),
    checkKeySpend(h.keys, h.records),
    checkCredits(h.credits, h.records),
    checkReservations(h.reservations, h.atMs, boundMs, h.registry),
    checkDuplicateIds(calls, h.records, h.events),
  ];
}

const failing = (results: CheckResult[]) => results.filter((r) => r.failed > 0);

async function main(): Promise<number> {
  const config = loadSoakConfig();
  const log = (msg: string) => console.log(`[soak] ${msg}`);
  log(
    `${config.minutes} min on a Redis ${config.redis}, ${config.replicas.gateway} gateways, ${config.replicas.guardrail} guardrail, ${config.replicas.speech} speech; ${config.concurrency} speech clients, ${config.writers} writers; a fault every ${config.chaosEverySeconds.join("-")} s`,
  );
  const system = await startSoakSystem(config);
  const redis = system.redis.client();
  redis.on("error", () => {});
  try {
    const since = new Date(Date.now() - 1_000);
    const world = await createWorld(system.url);
    log(
      `up at ${system.url}; ${world.keys.length} keys in ${world.workspaceIds.length} workspaces`,
    );
    const load = new SoakLoad(system.url, world);
    const chaos = new Chaos(system.deployment, system.redis, config.chaosEverySeconds);
    load.start(config.concurrency, config.writers);
    chaos.start();
    let registrySeen = false;
    const errors = new ErrorLines();
    errors.watch(system.deployment);
    const sampler = setInterval(() => {
      errors.watch(system.deployment);
      registryExists(redis, world.workspaceIds).then(
        (found) => {
          registrySeen ||= found;
        },
        () => {},
      );
    }, 5_000);
    await new Promise((r) => setTimeout(r, config.minutes * 60_000));
    log("load and faults stop; the system settles");
    await chaos.stop();
    await load.stop();
    clearInterval(sampler);

    // Settle: the checks are retried until they hold or the recovery bound has passed.
    const boundMs = config.recoverySeconds * 1000;
    const deadline = Date.now() + boundMs;
    let results: CheckResult[];
    for (;;) {
      const holdings = await collect(system.url, world, redis, since);
      holdings.registry ||= registrySeen;
      results = runChecks(load.calls, holdings, boundMs);
      if (failing(results).length === 0 || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 3_000));
    }
    errors.watch(system.deployment);
    const errorLines = errors.render();
    console.log(`\n${renderChecks(results)}\n\n${renderTotals(load.calls, chaos.faults)}\n`);
    if (errorLines.length > 0)
      console.log(`error lines the processes logged:\n${errorLines.join("\n")}\n`);
    const failed = failing(results);
    log(failed.length === 0 ? "every invariant holds" : `${failed.length} check(s) failed`);
    return failed.length === 0 ? 0 : 1;
  } finally {
    redis.disconnect();
    await system.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
