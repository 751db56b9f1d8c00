import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { REGION_NAMES, type RegionName } from "../../platform/regions.js";
import type { Route } from "../context.js";
import { HttpError } from "../http-error.js";
import { sendJson } from "../http-io.js";
import { type JsonSchema, shapeOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

const HEALTHY: JsonSchema = shapeOf<{ status: "ok"; region: RegionName }>({
  status: { const: "ok" },
  region: { enum: REGION_NAMES },
});

/** A service slower than this to answer its health check is reported down. */
const CHECK_TIMEOUT_MS = 1500;

/** What a service that answers NOT_SERVING depends on. */
const DEPENDS_ON = { guardrail: "its store is", speech: "its store or engine is" };

type Verdict = "serving" | "not serving" | "not answering";

/**
 * Asks one service process its grpc.health.v1 status. SERVING means the
 * process answers and so does everything it depends on (its store; for
 * speech, the engine's workers).
 */
async function check(
  client: { check(req: { service: string }, opts: object): Promise<{ status: Status }> },
  signal: AbortSignal,
): Promise<Verdict> {
  try {
    const res = await client.check({ service: "" }, { signal, timeoutMs: CHECK_TIMEOUT_MS });
    return res.status === Status.SERVING ? "serving" : "not serving";
  } catch {
    return "not answering";
  }
}

export const healthRoutes: Route[] = [
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
