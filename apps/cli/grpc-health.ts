/**
 * Container health check for the gRPC services: exits 0 when the service at
 * the given URL answers grpc.health.v1.Health/Check with SERVING (it and its
 * store, and for speech its engine, can work). No credentials needed.
 * With a third argument, asks that service name instead: "liveness" answers SERVING whenever the
 * process's event loop does, whatever its store (a liveness probe).
 * Usage: node dist/apps/cli/grpc-health.js guardrail|speech URL [service]
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";
import { grpcTlsSettings } from "./settings.js";

const [which, url, service = ""] = process.argv.slice(2);
try {
  // With mTLS configured (RAILGATE_GRPC_TLS_*, checked by the configuration's rules as the
  // service's own), the probe speaks TLS like the gateway does.
  const tls = loadGrpcTls(grpcTlsSettings(process.env));
  const transport = createGrpcTransport({
    baseUrl: url ?? "http://127.0.0.1:50051",
    nodeOptions: tls,
  });
  const { status } = await createClient(Health, transport).check({ service }, { timeoutMs: 3000 });
  if (status !== Status.SERVING) throw new Error(`${which ?? "service"} is ${Status[status]}`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`unhealthy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
