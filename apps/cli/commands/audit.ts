import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { auditPageToJson } from "../../../gateway/json/audit-json.js";
import { type Command, int, str, type Values } from "../command.js";
import { rows } from "../output.js";
import { UsageError } from "../usage-error.js";

/** --from / --to: an ISO 8601 instant or a UTC day, as the HTTP API takes them. */
function instant(values: Values, name: string) {
  const v = str(values, name);
  if (v === undefined) return undefined;
  const at = new Date(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(at.getTime())) {
    throw new UsageError(`--${name} must be an ISO 8601 instant or a UTC day, got "${v}"`);
  }
  return timestampFromDate(at);
}

export const auditCommands: Command[] = [
  {
    words: "audit list",
    options: {
      action: { type: "string" },
      "resource-type": { type: "string" },
      "resource-id": { type: "string" },
      actor: { type: "string" },
      workspace: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      cursor: { type: "string" },
      limit: { type: "string" },
    },
    summary: "the audit log, newest first (--json adds next_cursor for --cursor)",
    async run({ clients, values }) {
      const res = await clients.accounts.listAuditEvents({
        action: str(values, "action") ?? "",
        resourceType: str(values, "resource-type") ?? "",
        resourceId: str(values, "resource-id") ?? "",
        actor: str(values, "actor") ?? "",
        workspaceId: str(values, "workspace") ?? "",
        from: instant(values, "from"),
        to: instant(values, "to"),
        cursor: str(values, "cursor") ?? "",
        limit: int(values, "limit", 0),
      });
      const page = auditPageToJson(res);
      const table = page.data.map((e) => ({
        at: e.at,
        action: e.action,
        resource: e.resource.label ?? e.resource.id,
        actor: e.actor.name || e.actor.label,
        changes: e.changes,
      }));
      return rows(table, ["at", "action", "resource", "actor", "changes"], page);
    },
  },
];
