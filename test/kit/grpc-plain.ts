import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const protoRoot = fileURLToPath(new URL("../../../proto", import.meta.url));

type Callback = (err: grpc.ServiceError | null, res: Record<string, unknown>) => void;
export type PlainClient = grpc.Client &
  Record<string, (req: unknown, md: grpc.Metadata, cb: Callback) => unknown>;

/** Each service's file and name, and its package's domain when that is not the key's. */
const SERVICES = {
  guardrail: ["railgate/guardrail/v1/guardrail_service.proto", "GuardrailService"],
  policies: [
    "railgate/guardrail/v1/guardrail_policy_service.proto",
    "GuardrailPolicyService",
    "guardrail",
  ],
  account: ["railgate/account/v1/account_service.proto", "AccountService"],
  speech: ["railgate/speech/v1/speech_service.proto", "SpeechService"],
  webhook: ["railgate/webhook/v1/webhook_service.proto", "WebhookService"],
} as const satisfies Record<string, readonly [string, string, string?]>;

/** A plain @grpc/grpc-js client built from the .proto files: no Connect on the client side. */
export function plainClient(domain: keyof typeof SERVICES, port: number): PlainClient {
  return plainClientWith(domain, port, grpc.credentials.createInsecure());
}

/** The same with channel credentials of the caller's choosing (TLS, mTLS). */
export function plainClientWith(
  domain: keyof typeof SERVICES,
  port: number,
  credentials: grpc.ChannelCredentials,
): PlainClient {
  const [file, service, pkg = domain] = SERVICES[domain] as readonly [string, string, string?];
  const def = protoLoader.loadSync(file, {
    includeDirs: [protoRoot],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  let node = grpc.loadPackageDefinition(def) as Record<string, unknown>;
  for (const p of ["railgate", pkg, "v1"]) node = node[p] as Record<string, unknown>;
  const Ctor = node[service] as unknown as new (
    a: string,
    c: grpc.ChannelCredentials,
  ) => PlainClient;
  return new Ctor(`127.0.0.1:${port}`, credentials);
}

/** Call metadata: a bearer key, the service credential, an asserted region (each optional). */
export function metadata(
  init: { key?: string; internalToken?: string; region?: string } = {},
): grpc.Metadata {
  const md = new grpc.Metadata();
  if (init.key !== undefined) md.set("authorization", `Bearer ${init.key}`);
  if (init.internalToken !== undefined) md.set("railgate-internal-token", init.internalToken);
  if (init.region !== undefined) md.set("railgate-ingress-region", init.region);
  return md;
}

export function unary(
  client: PlainClient,
  method: string,
  req: unknown,
  md: grpc.Metadata = new grpc.Metadata(),
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const fn = client[method];
    if (!fn) throw new Error(`no method ${method}`);
    fn.call(client, req, md, (err: grpc.ServiceError | null, res: Record<string, unknown>) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** The gRPC status a call ended with (OK = 0 when it succeeded). */
export async function statusOf(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  try {
    await p;
    return { code: grpc.status.OK, details: "" };
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: e.code, details: e.details };
  }
}

/** Reads a server stream to its end; rejects with the stream's error. */
export function serverStream(
  client: PlainClient,
  method: string,
  req: unknown,
  md: grpc.Metadata,
): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const fn = client[method] as unknown as (
      req: unknown,
      md: grpc.Metadata,
    ) => grpc.ClientReadableStream<Record<string, unknown>>;
    const call = fn.call(client, req, md);
    const messages: Record<string, unknown>[] = [];
    call.on("data", (m) => messages.push(m));
    call.on("error", reject);
    call.on("end", () => resolve(messages));
  });
}
