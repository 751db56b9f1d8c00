import { fileURLToPath } from "node:url";
import type * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";

const protoRoot = fileURLToPath(new URL("../../../proto", import.meta.url));

/**
 * google.rpc.Status, the message gRPC servers put in grpc-status-details-bin.
 * Its definition is fixed by gRPC (google/rpc/status.proto, with Any inlined
 * field for field), and no package installed here ships the .proto file.
 */
const STATUS_PROTO = `
syntax = "proto3";
package google.rpc;
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
`;

const Status = protobuf
  .parse(STATUS_PROTO, { keepCase: true })
  .root.lookupType("google.rpc.Status");
const ourTypes = new protobuf.Root();
ourTypes.resolvePath = (_origin, target) => `${protoRoot}/${target}`;
ourTypes.loadSync("railgate/common/v1/error_info.proto", { keepCase: true });
const ErrorInfo = ourTypes.lookupType("railgate.common.v1.ErrorInfo");

/** ErrorInfo as a plain client decodes it: enum values by name, unset fields absent. */
export interface PlainErrorInfo {
  reason: string;
  retry_after_seconds?: number;
}

/**
 * The ErrorInfo detail of a failed call, read the way any gRPC client does:
 * grpc-status-details-bin decoded as google.rpc.Status, its details unpacked by
 * type URL with the .proto files. Undefined when the error carries none.
 */
export function errorInfoOf(err: grpc.ServiceError): PlainErrorInfo | undefined {
  const [bin] = err.metadata.get("grpc-status-details-bin");
  if (!(bin instanceof Buffer)) return undefined;
  const status = Status.toObject(Status.decode(bin), { defaults: true }) as {
    details: { type_url: string; value: Uint8Array }[];
  };
  const detail = status.details.find(
    (d) => d.type_url === "type.googleapis.com/railgate.common.v1.ErrorInfo",
  );
  if (!detail) return undefined;
  return ErrorInfo.toObject(ErrorInfo.decode(detail.value), {
    enums: String,
  }) as PlainErrorInfo;
}

/** The error a call was refused with; fails when it succeeded. */
export async function refusal(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error("expected the call to be refused");
}
