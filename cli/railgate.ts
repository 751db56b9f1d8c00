/**
 * Operator CLI. Talks to a running AccountService/GuardrailService over gRPC
 * (GUARDRAIL_GRPC_URL, default http://127.0.0.1:50051) and authenticates like
 * any other caller, with a management key (--key, RAILGATE_KEY, or the
 * operator's RAILGATE_MANAGEMENT_KEY that the services registered at start-up:
 * how the first further keys are minted).
 */
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { guardrailToJson } from "../gateway/json/guardrail-json.js";
import { keyToJson } from "../gateway/routes/keys.js";
import { KeyKind } from "../gen/railgate/account/v1/account_pb.js";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";

const USAGE = `usage: npm run railgate -- <command> [options]

  keys create [--management] [--name NAME] [--workspace ID] [--member USER_ID]
              create a key and print its secret once
  keys list   [--workspace ID]
  keys disable HASH | keys enable HASH | keys delete HASH
  workspaces list
  workspaces create --name NAME [--slug SLUG]
  guardrails list [--workspace ID]   (default: the default workspace)

options:      --key KEY   a management key (default: $RAILGATE_KEY, else $RAILGATE_MANAGEMENT_KEY)
environment: GUARDRAIL_GRPC_URL (default http://127.0.0.1:50051)`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    management: { type: "boolean", default: false },
    name: { type: "string" },
    slug: { type: "string" },
    workspace: { type: "string" },
    member: { type: "string" },
    key: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});

const managementKey =
  values.key ?? (process.env.RAILGATE_KEY || process.env.RAILGATE_MANAGEMENT_KEY || undefined);
const transport = createGrpcTransport({
  baseUrl: process.env.GUARDRAIL_GRPC_URL || "http://127.0.0.1:50051",
  interceptors: [
    (next) => (req) => {
      if (managementKey) req.header.set("authorization", `Bearer ${managementKey}`);
      return next(req);
    },
  ],
});
const accounts = createClient(AccountService, transport);
const guardrails = createClient(GuardrailService, transport);

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function run(): Promise<void> {
  const [noun, verb, arg] = positionals;
  if (values.help || !noun) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  switch (`${noun} ${verb}`) {
    case "keys create": {
      const res = await accounts.createKey({
        name: values.name ?? (values.management ? "Management key (CLI)" : "API key (CLI)"),
        kind: values.management ? KeyKind.MANAGEMENT : KeyKind.STANDARD,
        workspaceId: values.workspace ?? "",
        memberUserId: values.member ?? "",
      });
      print({ data: res.key && keyToJson(res.key, res.usage), key: res.secret });
      return;
    }
    case "keys list": {
      const res = await accounts.listKeys({
        workspaceId: values.workspace,
        limit: 100,
        includeDisabled: true,
      });
      print({
        data: res.keys.map((k, i) => keyToJson(k, res.usages[i])),
        total_count: res.totalCount,
      });
      return;
    }
    case "keys disable":
    case "keys enable": {
      const res = await accounts.updateKey({
        hash: arg ?? "",
        disabled: verb === "disable",
        updateMask: { paths: ["disabled"] },
      });
      print({ data: res.key && keyToJson(res.key, res.usage) });
      return;
    }
    case "keys delete": {
      print(await accounts.deleteKey({ hash: arg ?? "" }));
      return;
    }
    case "workspaces list": {
      const res = await accounts.listWorkspaces({ limit: 100 });
      print({
        data: res.workspaces.map((w) => ({ id: w.id, name: w.name, slug: w.slug })),
        total_count: res.totalCount,
      });
      return;
    }
    case "workspaces create": {
      const res = await accounts.createWorkspace({
        name: values.name ?? "",
        slug: values.slug ?? "",
      });
      print({ data: res.workspace });
      return;
    }
    case "guardrails list": {
      const res = await guardrails.listGuardrails({ workspaceId: values.workspace, limit: 100 });
      print({ data: res.guardrails.map(guardrailToJson), total_count: res.totalCount });
      return;
    }
    default:
      process.stderr.write(`unknown command "${positionals.join(" ")}"\n${USAGE}\n`);
      process.exitCode = 2;
  }
}

run().catch((err: unknown) => {
  process.stderr.write(`railgate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
