/**
 * Container health check for the gRPC services: exits 0 when the service at
 * the given URL answers a cheap RPC. Usage: node dist/cli/grpc-health.js guardrail|speech URL
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";

const [which, url] = process.argv.slice(2);
const token = process.env.RAILGATE_INTERNAL_TOKEN;
const transport = createGrpcTransport({
  baseUrl: url ?? "http://127.0.0.1:50051",
  // The account probe is a gateway-only call: it proves itself like a gateway.
  interceptors: [
    (next) => (req) => {
      if (token) req.header.set("railgate-internal-token", token);
      return next(req);
    },
  ],
});
const options = { timeoutMs: 3000 };

try {
  if (which === "speech") await createClient(SpeechService, transport).listModels({}, options);
  else await createClient(AccountService, transport).listWorkspaces({ limit: 1 }, options);
  process.exit(0);
} catch (err) {
  process.stderr.write(`unhealthy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
