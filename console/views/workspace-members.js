// A workspace's members (GET/POST /workspaces/:id/members, /add, /remove): the users added to it
// and, marked implicit, the users its keys, member assignments and policies name (they cannot be
// removed here: what names them must go first). The Workspaces view's "Members" button picks one.

import { call, fetchAll } from "../lib/api.js";
import { $, button, status } from "../lib/dom.js";
import { dateTime } from "../lib/format.js";
import { dataTable } from "../lib/table.js";

const table = dataTable({
  caption: "Members",
  id: "members-table",
  columns: [
    { key: "user_id", label: "User id", text: (m) => m.user_id, className: "mono" },
    {
      key: "how",
      label: "Membership",
      text: (m) => (m.implicit ? "Implicit (named by a key, assignment or policy)" : "Added"),
    },
    {
      key: "created",
      label: "Since",
      text: (m) => dateTime(m.created_at),
      sort: (m) => m.created_at,
    },
    { key: "id", label: "ID", text: (m) => m.id, className: "mono clip", secondary: true },
  ],
  actions: (m) =>
    m.implicit
      ? []
      : [button("Remove", `Remove member ${m.user_id}`, () => removeMember(m), "danger")],
});

function chosen() {
  const select = $("wm-workspace");
  return { id: select.value, name: select.selectedOptions[0]?.textContent ?? "" };
}

/** "3 members in Team A: 2 added, 1 implicit." */
function countText(members, name) {
  const implicit = members.filter((m) => m.implicit).length;
  const n = members.length;
  return `${n} ${n === 1 ? "member" : "members"} in ${name}: ${n - implicit} added, ${implicit} implicit.`;
}

export async function refreshMembers() {
  const ws = chosen();
  if (!$("wm-list").contains(table.element)) $("wm-list").replaceChildren(table.element);
  if (!ws.id) {
    table.setRows([]);
    $("wm-count").textContent = "";
    return;
  }
  try {
    const members = await fetchAll(`/workspaces/${encodeURIComponent(ws.id)}/members`);
    table.setRows(members);
    $("wm-count").textContent = countText(members, ws.name);
  } catch (err) {
    table.setRows([]);
    $("wm-count").textContent = `Members of ${ws.name}: ${err.message}`;
  }
}

/** User ids typed in one field, separated by commas, spaces or new lines. */
function typedUserIds() {
  return $("wm-user-ids")
    .value.split(/[\s,]+/)
    .filter((u) => u !== "");
}

async function addMembers(event) {
  event.preventDefault();
  $("member-error").textContent = "";
  const ws = chosen();
  try {
    const res = await call("POST", `/workspaces/${encodeURIComponent(ws.id)}/members/add`, {
      user_ids: typedUserIds(),
    });
    $("wm-user-ids").value = "";
    status(`${res.added_count} added to ${ws.name}.`);
    await refreshMembers();
  } catch (err) {
    $("member-error").textContent = err.message;
  }
}

async function removeMember(m) {
  const ws = chosen();
  try {
    await call("POST", `/workspaces/${encodeURIComponent(ws.id)}/members/remove`, {
      user_ids: [m.user_id],
    });
    status(`Member ${m.user_id} removed from ${ws.name}.`);
    await refreshMembers();
  } catch (err) {
    status(`Remove member ${m.user_id}: ${err.message}`);
  }
}

/** Shows the members of workspace `id` (from its row in the list). */
export async function showMembersOf(id) {
  $("wm-workspace").value = id;
  await refreshMembers();
  $("members-h").scrollIntoView({ block: "start" });
  $("wm-workspace").focus();
}

export function setupMembers() {
  $("member-form").addEventListener("submit", addMembers);
  $("wm-workspace").addEventListener("change", () => void refreshMembers());
}
