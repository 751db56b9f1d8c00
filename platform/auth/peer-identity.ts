import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import type { TLSSocket } from "node:tls";
import { createContextKey, createContextValues } from "@connectrpc/connect";

/**
 * True when the caller presented a TLS client certificate that verifies
 * against the CA of RAILGATE_GRPC_TLS_CA: mTLS, the stronger form of the
 * service credential that proves a Railgate gateway.
 */
export const peerVerifiedKey = createContextKey(false, { description: "mTLS peer verified" });

/** Context values of a call, read from its connection before any handler runs. */
export function peerContextValues(req: IncomingMessage | Http2ServerRequest) {
  return socketContextValues(req.socket);
}

/** The same, from the connection itself (a call served straight from its HTTP/2 stream). */
export function socketContextValues(connection: unknown) {
  const values = createContextValues();
  const socket = connection as TLSSocket | undefined;
  if (socket?.encrypted && socket.authorized) values.set(peerVerifiedKey, true);
  return values;
}
