import { createContextValues } from "@connectrpc/connect";
import { REGION_NAMES, type RegionName } from "../../domain/enums.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { ON_CONNECTION } from "../../platform/rpc/http2-grpc-transport.js";
import type { ServiceHealth } from "../clients.js";
import type { Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { sendJson } from "../http-io.js";
import { type JsonSchema, shapeOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const HEALTHY: JsonSchema = shapeOf<{ status: "ok"; region: RegionName }>({
  status: { const: "ok" },
  region: { enum: REGION_NAMES },
});

const LIVE: JsonSchema = shapeOf<{ status: "ok" }>({ status: { const: "ok" } });

/** A service slower than this to answer its health check is reported down. */
const CHECK_TIMEOUT_MS = 1500;

/** What a service that answers NOT_SERVING depends on. */
const DEPENDS_ON = { guardrail: "its store is", speech: "its store or engine is" };

/** At most this many connections of one service are asked per check. */
const MAX_PATHS = 4;

type Verdict = "serving" | "not serving" | "not answering";

/**
 * Asks one service its grpc.health.v1 status over each of the gateway's ready connections to
 * it (each may reach another replica or address), at once. SERVING from any one means the
 * service can do real work through this gateway (the client leaves a replica that stopped
 * answering: platform/rpc/http2-grpc-pool.ts), so one frozen or dead replica beside a live one
 * does not take the gateway out of its load balancer. SERVING means the process answers and so
 * does everything it depends on (its store; for speech, the engine's workers).
 */
async function check(health: ServiceHealth, signal: AbortSignal): Promise<Verdict> {
  const paths = Math.min(MAX_PATHS, health.paths());
  const asks: Promise<Verdict>[] = [];
  for (let i = 0; i < paths; i++) {
    asks.push(
      health.client
        .check(
          { service: "" },
          {
            signal,
            timeoutMs: CHECK_TIMEOUT_MS,
            contextValues: createContextValues().set(ON_CONNECTION, i),
          },
        )
        .then(
          (res) => (res.status === Status.SERVING ? "serving" : "not serving"),
          () => "not answering",
        ),
    );
  }
  const verdicts = await Promise.all(asks);
  if (verdicts.includes("serving")) return "serving";
  return verdicts.includes("not serving") ? "not serving" : "not answering";
}

export const healthRoutes: Route[] = [
  {
    // Liveness: answered from the event loop with nothing else asked, so a wedged or frozen
    // process fails it (and is restarted) while an outage of Redis or of a service, which a
    // restart would not cure, does not. Readiness is /healthz.
    pattern: "/livez",
    access: accessOf(Health.method.check),
    docs: {
      GET: {
        summary:
          "Liveness of the gateway process (asks no dependency: 200 while its event loop runs)",
        status: 200,
        response: LIVE,
      },
    },
    methods: {
      async GET(ctx) {
        sendJson(ctx.res, 200, { status: "ok" });
      },
    },
  },
  {
    pattern: "/healthz",
    access: accessOf(Health.method.check),
    docs: {
      GET: {
        summary: "Health of the gateway and of the services it calls (503 when one is down)",
        status: 200,
        response: HEALTHY,
      },
    },
    methods: {
      async GET(ctx) {
        const [guardrail, speech] = await Promise.all([
          check(ctx.clients.health.guardrail, ctx.signal),
          check(ctx.clients.health.speech, ctx.signal),
        ]);
        const down = Object.entries({ guardrail, speech }).filter(([, v]) => v !== "serving");
        if (down.length > 0) {
          // A load balancer needs 503 (take this instance out); the operator needs to know
          // which part is down.
          const parts = down.map(([name, v]) =>
            v === "not serving"
              ? `${name} service not serving (${DEPENDS_ON[name as keyof typeof DEPENDS_ON]} down)`
              : `${name} service not answering`,
          );
          throw new HttpError(503, `Service unavailable: ${parts.join("; ")}`);
        }
        sendJson(ctx.res, 200, { status: "ok", region: ctx.region });
      },
    },
  },
];
