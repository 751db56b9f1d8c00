import { randomUUID } from "node:crypto";
import { IDEMPOTENCY_KEY_HEADER } from "../../../domain/idempotency.js";
import { keysToJson, keyToJson } from "../../../gateway/json/key-json.js";
import { workspaceMemberToJson as memberRow } from "../../../gateway/json/workspace-member-json.js";
import { KeyKind } from "../../../gen/railgate/account/v1/account_pb.js";
import { type Command, int, num, PAGING, str } from "../command.js";
import { record, rows } from "../output.js";

const KEY_COLUMNS = ["hash", "name", "kind", "workspace_id", "disabled", "guardrail_id"];

export const accountCommands: Command[] = [
  {
    words: "keys create",
    options: {
      management: { type: "boolean" },
      name: { type: "string" },
      workspace: { type: "string" },
      member: { type: "string" },
    },
    summary: "create a key and print its secret once",
    async run({ clients, values }) {
      const management = values.management === true;
      const res = await clients.accounts.createKey({
        name: str(values, "name") ?? (management ? "Management key (CLI)" : "API key (CLI)"),
        kind: management ? KeyKind.MANAGEMENT : KeyKind.STANDARD,
        workspaceId: str(values, "workspace") ?? "",
        memberUserId: str(values, "member") ?? "",
      });
      const data = res.key ? keyToJson(res.key, res.usage) : {};
      return record({ ...data, key: res.secret }, { data, key: res.secret });
    },
  },
  {
    words: "keys list",
    options: { workspace: { type: "string" }, ...PAGING },
    summary: "keys, disabled ones included",
    async run({ clients, values }) {
      const res = await clients.accounts.listKeys({
        workspaceId: str(values, "workspace"),
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
        includeDisabled: true,
      });
      const data = keysToJson(res);
      return rows(data, KEY_COLUMNS, { data, total_count: res.totalCount });
    },
  },
  ...(["disable", "enable"] as const).map(
    (verb): Command => ({
      words: `keys ${verb}`,
      args: ["HASH"],
      summary: `${verb} a key`,
      async run({ clients, args }) {
        const res = await clients.accounts.updateKey({
          hash: args[0],
          disabled: verb === "disable",
          updateMask: { paths: ["disabled"] },
        });
        const data = res.key ? keyToJson(res.key, res.usage) : {};
        return record(data, { data });
      },
    }),
  ),
  {
    words: "keys delete",
    args: ["HASH"],
    summary: "delete a key",
    async run({ clients, args }) {
      const res = await clients.accounts.deleteKey({ hash: args[0] });
      return record({ deleted: res.deleted });
    },
  },
  {
    words: "workspaces list",
    options: PAGING,
    summary: "workspaces",
    async run({ clients, values }) {
      const res = await clients.accounts.listWorkspaces({
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
      });
      const data = res.workspaces.map((w) => ({ id: w.id, name: w.name, slug: w.slug }));
      return rows(data, ["id", "name", "slug"], { data, total_count: res.totalCount });
    },
  },
  {
    words: "workspaces members list",
    args: ["WORKSPACE"],
    options: PAGING,
    summary:
      "a workspace's members: added, and implicit (named by its keys, assignments, policies)",
    async run({ clients, args, values }) {
      const res = await clients.accounts.listWorkspaceMembers({
        workspaceId: args[0],
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
      });
      const data = res.members.map(memberRow);
      return rows(data, ["user_id", "role", "implicit", "created_at", "id"], {
        data,
        total_count: res.totalCount,
      });
    },
  },
  {
    words: "workspaces members add",
    args: ["WORKSPACE", "USER_ID..."],
    summary: "add members (user ids) to a workspace",
    async run({ clients, args: [workspaceId = "", ...userIds] }) {
      const res = await clients.accounts.addWorkspaceMembers({ workspaceId, userIds });
      const data = res.members.map(memberRow);
      return record({ added_count: res.addedCount }, { added_count: res.addedCount, data });
    },
  },
  {
    words: "workspaces members remove",
    args: ["WORKSPACE", "USER_ID..."],
    summary: "remove members from a workspace (not one who owns enabled keys there)",
    async run({ clients, args: [workspaceId = "", ...userIds] }) {
      const res = await clients.accounts.removeWorkspaceMembers({ workspaceId, userIds });
      return record({ removed_count: res.removedCount });
    },
  },
  {
    words: "workspaces create",
    options: { name: { type: "string" }, slug: { type: "string" } },
    required: ["name"],
    summary: "create a workspace",
    async run({ clients, values }) {
      const res = await clients.accounts.createWorkspace({
        name: str(values, "name") ?? "",
        slug: str(values, "slug") ?? "",
      });
      const w = res.workspace;
      const data = { id: w?.id, name: w?.name, slug: w?.slug };
      return record(data, { data });
    },
  },
  {
    words: "credits get",
    options: { workspace: { type: "string" } },
    summary: "credits of a workspace, or of the whole organization without --workspace",
    async run({ clients, values }) {
      const res = await clients.accounts.getCredits({
        workspaceId: str(values, "workspace") ?? "",
      });
      const data = {
        workspace_id: res.workspaceId || null,
        total_credits: res.totalCreditsUsd,
        total_usage: res.totalUsageUsd,
        balance_usd: res.balanceUsd ?? null,
        metered: res.balanceUsd !== undefined,
      };
      return record(data, { data });
    },
  },
  {
    words: "credits add",
    options: { workspace: { type: "string" }, amount: { type: "string" } },
    required: ["workspace", "amount"],
    summary: "add credits in USD to a workspace (it becomes metered)",
    async run({ clients, values }) {
      // A top-up that reaches the service twice (a retried call) adds once under one key.
      const res = await clients.accounts.addCredits(
        { workspaceId: str(values, "workspace") ?? "", amountUsd: num(values, "amount") },
        { headers: { [IDEMPOTENCY_KEY_HEADER]: randomUUID() } },
      );
      const data = { workspace_id: res.workspaceId, balance_usd: res.balanceUsd, metered: true };
      return record(data, { data });
    },
  },
];
