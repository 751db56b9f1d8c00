import { toJson } from "@bufbuild/protobuf";
import {
  KeyAssignmentSchema,
  MemberAssignmentSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type Command, int, PAGING, str } from "../command.js";
import { type Row, record, rows } from "../output.js";

const AS_JSON = { useProtoFieldName: true } as const;

export const assignmentCommands: Command[] = [
  {
    words: "assignments keys list",
    options: { guardrail: { type: "string" }, ...PAGING },
    summary: "key assignments (of one guardrail with --guardrail)",
    async run({ clients, values }) {
      const res = await clients.guardrails.listKeyAssignments({
        guardrailId: str(values, "guardrail"),
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
      });
      const data = res.assignments.map((a) => toJson(KeyAssignmentSchema, a, AS_JSON) as Row);
      return rows(data, ["guardrail_id", "key_hash", "key_name", "assigned_by", "created_at"], {
        data,
        total_count: res.totalCount,
      });
    },
  },
  {
    words: "assignments keys assign",
    args: ["GUARDRAIL_ID", "KEY_HASH..."],
    summary: "assign a guardrail to keys",
    async run({ clients, args: [guardrailId = "", ...keyHashes] }) {
      const res = await clients.guardrails.assignKeys({ guardrailId, keyHashes });
      return record({ assigned_count: res.assignedCount });
    },
  },
  {
    words: "assignments keys unassign",
    args: ["GUARDRAIL_ID", "KEY_HASH..."],
    summary: "remove a guardrail from keys",
    async run({ clients, args: [guardrailId = "", ...keyHashes] }) {
      const res = await clients.guardrails.unassignKeys({ guardrailId, keyHashes });
      return record({ unassigned_count: res.unassignedCount });
    },
  },
  {
    words: "assignments members list",
    options: { guardrail: { type: "string" }, ...PAGING },
    summary: "member assignments (of one guardrail with --guardrail)",
    async run({ clients, values }) {
      const res = await clients.guardrails.listMemberAssignments({
        guardrailId: str(values, "guardrail"),
        offset: int(values, "offset", 0),
        limit: int(values, "limit", 100),
      });
      const data = res.assignments.map((a) => toJson(MemberAssignmentSchema, a, AS_JSON) as Row);
      return rows(data, ["guardrail_id", "user_id", "workspace_id", "assigned_by", "created_at"], {
        data,
        total_count: res.totalCount,
      });
    },
  },
  {
    words: "assignments members assign",
    args: ["GUARDRAIL_ID", "USER_ID..."],
    summary: "assign a guardrail to members",
    async run({ clients, args: [guardrailId = "", ...memberUserIds] }) {
      const res = await clients.guardrails.assignMembers({ guardrailId, memberUserIds });
      return record({ assigned_count: res.assignedCount });
    },
  },
  {
    words: "assignments members unassign",
    args: ["GUARDRAIL_ID", "USER_ID..."],
    summary: "remove a guardrail from members",
    async run({ clients, args: [guardrailId = "", ...memberUserIds] }) {
      const res = await clients.guardrails.unassignMembers({ guardrailId, memberUserIds });
      return record({ unassigned_count: res.unassignedCount });
    },
  },
];
