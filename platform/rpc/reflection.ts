import {
  create,
  createRegistry,
  type DescFile,
  type DescService,
  fromBinary,
  type MessageInitShape,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflectionRequestSchema as AlphaRequestSchema,
  ServerReflectionResponseSchema as AlphaResponseSchema,
  ServerReflection as ServerReflectionAlpha,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { ServiceRegistration } from "./in-process-transport.js";

/** gRPC status codes an error_response carries (a field of the message, not the call's status). */
const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;

/**
 * A file and everything it imports, the file first: what a reflection client needs to decode it.
 * Keyed by the proto's own name ("a/b.proto"): DescFile.name drops the extension.
 */
function withDependencies(file: DescFile): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.set(f.proto.name, f);
    for (const d of f.dependencies) visit(d);
  };
  visit(file);
  return [...seen.values()];
}

/**
 * Answers grpc.reflection ServerReflectionInfo from the descriptors compiled
 * into gen/ (the same ones the routes were built from, so what a client
 * discovers is exactly what the server decodes).
 */
class Reflector {
  private readonly names: string[];
  private readonly files = new Map<string, DescFile>();
  private readonly registry: Registry;

  constructor(services: DescService[]) {
    this.names = services.map((s) => s.typeName).sort();
    for (const s of services)
      for (const f of withDependencies(s.file)) this.files.set(f.proto.name, f);
    this.registry = createRegistry(...this.files.values());
  }

  answer(req: ServerReflectionRequest): ServerReflectionResponse {
    return create(ServerReflectionResponseSchema, {
      validHost: req.host,
      originalRequest: req,
      messageResponse: this.respond(req.messageRequest),
    });
  }

  private respond(r: ServerReflectionRequest["messageRequest"]): ResponseInit {
    switch (r.case) {
      case "listServices":
        return {
          case: "listServicesResponse",
          value: { service: this.names.map((name) => ({ name })) },
        };
      case "fileByFilename":
        return this.fileAnswer(this.files.get(r.value), `file ${r.value}`);
      case "fileContainingSymbol":
        return this.fileAnswer(this.fileOfSymbol(r.value), `symbol ${r.value}`);
      case "fileContainingExtension":
      case "allExtensionNumbersOfType":
        // No Railgate file declares extensions: say so the way grpcurl expects.
        return notFound("no extensions are declared");
      default:
        return {
          case: "errorResponse",
          value: { errorCode: UNIMPLEMENTED, errorMessage: "unknown reflection request" },
        };
    }
  }

  /** A type, a service, or a method (`pkg.Service.Method`) or field (`pkg.Message.field`) of one. */
  private fileOfSymbol(symbol: string): DescFile | undefined {
    const found = this.registry.get(symbol);
    if (found) return found.file;
    const parent = this.registry.get(symbol.slice(0, Math.max(0, symbol.lastIndexOf("."))));
    return parent?.kind === "service" || parent?.kind === "message" ? parent.file : undefined;
  }

  private fileAnswer(file: DescFile | undefined, what: string): ResponseInit {
    if (!file) return notFound(`${what} not found`);
    return {
      case: "fileDescriptorResponse",
      value: {
        fileDescriptorProto: withDependencies(file).map((f) =>
          toBinary(FileDescriptorProtoSchema, f.proto),
        ),
      },
    };
  }
}

type ResponseInit = NonNullable<
  MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"]
>;

function notFound(errorMessage: string): ResponseInit {
  return { case: "errorResponse", value: { errorCode: NOT_FOUND, errorMessage } };
}

/**
 * Reflection (v1, and v1alpha that older grpcurl and grpc_cli still ask for)
 * over the given services and the reflection services themselves.
 */
export function reflectionServices(services: DescService[]): ServiceRegistration[] {
  const reflector = new Reflector([...services, ServerReflection, ServerReflectionAlpha]);
  const v1: Partial<ServiceImpl<typeof ServerReflection>> = {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield reflector.answer(req);
    },
  };
  // The two versions are the same messages under another package: same fields, same numbers.
  const v1alpha: Partial<ServiceImpl<typeof ServerReflectionAlpha>> = {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        const asV1 = fromBinary(ServerReflectionRequestSchema, toBinary(AlphaRequestSchema, req));
        const answer = reflector.answer(asV1);
        yield fromBinary(AlphaResponseSchema, toBinary(ServerReflectionResponseSchema, answer));
      }
    },
  };
  return [
    { service: ServerReflection, impl: v1 as ServiceRegistration["impl"] },
    { service: ServerReflectionAlpha, impl: v1alpha as ServiceRegistration["impl"] },
  ];
}
