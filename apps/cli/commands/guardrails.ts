import { guardrailInputFromJson, guardrailToJson } from "../../../gateway/json/guardrail-json.js";
import { type Command, GUARDRAIL_BODY, int, jsonBody, PAGING, str } from "../command.js";
import { record, rows } from "../output.js";

const COLUMNS = [
  "id",
  "name",
  "workspace_id",
  "limit_usd",
  "reset_interval",
  "is_workspace_default",
];

export const guardrailCommands: Command[] = [
  {
    words: "guardrails list",
    options: { workspace: { type: "string" }, ...PAGING },
    summary: "guardrails of a workspace (default: the default workspace)",
    async run({ clients, values }) {
      const res = await clients.guardrails.listGuardrails({
        workspaceId: str(values, "workspace"),
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
      });
      const data = res.guardrails.map(guardrailToJson);
      return rows(data, COLUMNS, { data, total_count: res.totalCount });
    },
  },
  {
    words: "guardrails get",
    args: ["ID"],
    summary: "one guardrail",
    async run({ clients, args }) {
      const res = await clients.guardrails.getGuardrail({ id: args[0] });
      const data = res.guardrail ? guardrailToJson(res.guardrail) : {};
      return record(data, { data });
    },
  },
  {
    words: "guardrails create",
    options: GUARDRAIL_BODY,
    summary: "create from the HTTP API's guardrail JSON (--body JSON or --file PATH|-)",
    async run({ clients, values }) {
      // The gateway's parser: the same field checks and messages as POST /api/v1/guardrails.
      const { input } = guardrailInputFromJson(jsonBody(values));
      const res = await clients.guardrails.createGuardrail({ guardrail: input });
      const data = res.guardrail ? guardrailToJson(res.guardrail) : {};
      return record(data, { data });
    },
  },
  {
    words: "guardrails update",
    args: ["ID"],
    options: GUARDRAIL_BODY,
    summary: "change the fields given (--body JSON or --file PATH|-), like PATCH",
    async run({ clients, values, args }) {
      const { input, paths } = guardrailInputFromJson(jsonBody(values));
      const res = await clients.guardrails.updateGuardrail({
        id: args[0],
        guardrail: input,
        updateMask: { paths },
      });
      const data = res.guardrail ? guardrailToJson(res.guardrail) : {};
      return record(data, { data });
    },
  },
  {
    words: "guardrails delete",
    args: ["ID"],
    summary: "delete a guardrail (and its assignments)",
    async run({ clients, args }) {
      const res = await clients.guardrails.deleteGuardrail({ id: args[0] });
      return record({ deleted: res.deleted });
    },
  },
];
