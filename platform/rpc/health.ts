import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  type HealthCheckRequest,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { componentLogger } from "../observability/logger.js";

const log = componentLogger("health");

/** Resolves when a dependency answers; throws (or rejects) when it does not. */
export type HealthProbe = () => Promise<void> | void;

/**
 * The service name a liveness probe asks (Kubernetes' grpc probe, `service: liveness`): SERVING
 * whenever the process's event loop answers, draining or not, with no dependency asked, so a
 * Redis outage (which a restart would not cure) never fails it while a wedged process does.
 */
export const LIVENESS_SERVICE = "liveness";

/** A probe slower than this counts as down: health answers must come fast. */
const PROBE_TIMEOUT_MS = 1500;

async function probe(name: string, check: HealthProbe): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(check),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), PROBE_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch (err) {
    log.warn({ dependency: name, err: String(err) }, "health probe failed");
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The standard gRPC health service (grpc.health.v1.Health) of one server.
 * Each served service lists the dependencies it needs (its store, the speech
 * engine pool); Check runs their probes, so SERVING means this server can do
 * real work now. The empty service name asks about the whole server. While
 * the server drains for shutdown, every service answers NOT_SERVING.
 * Callers need no credentials: the answer reveals nothing but the status.
 */
export class HealthServiceImpl implements Partial<ServiceImpl<typeof Health>> {
  private draining = false;

  constructor(
    /** Fully qualified service name -> the probes of what it depends on, by name. */
    private readonly services: Record<string, Record<string, HealthProbe>>,
  ) {}

  /** From now on every check answers NOT_SERVING (load balancers stop sending work). */
  drain(): void {
    this.draining = true;
  }

  private async status(service: string): Promise<Status> {
    if (service === LIVENESS_SERVICE) return Status.SERVING;
    const deps =
      service === ""
        ? Object.assign({}, ...Object.values(this.services))
        : (this.services[service] ?? undefined);
    if (!deps) throw new ConnectError(`unknown service ${service.slice(0, 100)}`, Code.NotFound);
    if (this.draining) return Status.NOT_SERVING;
    const results = await Promise.all(
      Object.entries(deps as Record<string, HealthProbe>).map(([name, check]) =>
        probe(name, check),
      ),
    );
    return results.every(Boolean) ? Status.SERVING : Status.NOT_SERVING;
  }

  async check(req: HealthCheckRequest) {
    return { status: await this.status(req.service) };
  }

  async list() {
    const statuses: Record<string, { status: Status }> = {};
    for (const name of Object.keys(this.services)) {
      statuses[name] = { status: await this.status(name) };
    }
    return { statuses };
  }
}
