import { readFileSync } from "node:fs";

/**
 * TLS material of the internal gRPC hop (PEM). On a service: its server
 * certificate, and the CA that signs gateways' client certificates. On a
 * gateway: its client certificate, and the CA that signs the services'.
 */
export interface GrpcTls {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

export interface GrpcTlsFiles {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** Reads the three PEM files; a missing or unreadable one stops start-up naming its variable. */
export function loadGrpcTls(files: GrpcTlsFiles | undefined): GrpcTls | undefined {
  if (!files) return undefined;
  const read = (name: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(
        `${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
  };
  return {
    cert: read("RAILGATE_GRPC_TLS_CERT", files.certFile),
    key: read("RAILGATE_GRPC_TLS_KEY", files.keyFile),
    ca: read("RAILGATE_GRPC_TLS_CA", files.caFile),
  };
}
