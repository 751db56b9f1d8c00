// Railgate console: plain DOM, no framework. Every call goes to this gateway's own /api/v1 (api.js).

import { API, call, errorMessage, forgetKey, managementKey, rememberKey } from "./api.js";
import {
  editingId,
  fillGuardrailForm,
  guardrailRequest,
  setupGuardrailForm,
} from "./guardrail-form.js";

const $ = (id) => document.getElementById(id);

function status(text) {
  $("status").textContent = text;
}

/** A table of `rows` showing `columns`; cells are text, never HTML. */
function table(rows, columns, caption, actions) {
  if (rows.length === 0) {
    const p = document.createElement("p");
    p.textContent = `No ${caption.toLowerCase()}.`;
    return p;
  }
  const t = document.createElement("table");
  const cap = t.createCaption();
  cap.textContent = caption;
  const head = t.createTHead().insertRow();
  for (const c of [...columns, ...(actions ? ["Actions"] : [])]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = c;
    head.append(th);
  }
  const tbody = t.createTBody();
  for (const row of rows) {
    const tr = tbody.insertRow();
    for (const c of columns) {
      const v = row[c];
      tr.insertCell().textContent =
        v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    }
    if (actions) tr.insertCell().append(...actions(row));
  }
  return t;
}

function show(id, node) {
  $(id).replaceChildren(node);
}

function options(select, items, value, label) {
  select.replaceChildren(
    ...items.map((item) => {
      const o = document.createElement("option");
      o.value = value(item);
      o.textContent = label(item);
      return o;
    }),
  );
}

// ---- guardrails ----

let guardrails = [];

function button(text, label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

async function loadGuardrails() {
  const ws = $("g-list-workspace").value;
  const query = ws ? `&workspace_id=${encodeURIComponent(ws)}` : "";
  guardrails = (await call("GET", `/guardrails?limit=100${query}`)).data;
  show(
    "guardrails-list",
    table(
      guardrails,
      [
        "name",
        "id",
        "allowed_models",
        "allowed_providers",
        "content_filter_builtins",
        "content_filters",
        "limit_usd",
        "reset_interval",
      ],
      "Guardrails",
      (g) => [
        button("Edit", `Edit ${g.name}`, () => {
          fillGuardrailForm(g);
          $("g-name").focus();
        }),
        button("Assignments", `Assignments of ${g.name}`, () => showAssignments(g.id)),
        button("Delete", `Delete ${g.name}`, () => deleteGuardrail(g)),
      ],
    ),
  );
  for (const id of ["assign-guardrail", "assign-member-guardrail"]) {
    options(
      $(id),
      guardrails,
      (g) => g.id,
      (g) => g.name,
    );
  }
}

async function saveGuardrail(event) {
  event.preventDefault();
  const id = $("g-id").value;
  $("guardrail-error").textContent = "";
  const body = guardrailRequest();
  if (id && Object.keys(body).length === 0) {
    // The API refuses an empty update; saying so here is plainer than its 400.
    $("guardrail-error").textContent = "Nothing changed: edit a field, then save.";
    return;
  }
  try {
    const res = id
      ? await call("PATCH", `/guardrails/${encodeURIComponent(id)}`, body)
      : await call("POST", "/guardrails", body);
    status(`Guardrail ${res.data.name} ${id ? "saved" : "created"} (${res.data.id}).`);
    // The list shows one workspace: the one that holds what was just saved.
    if (workspaceShown(res.data.workspace_id)) $("g-list-workspace").value = res.data.workspace_id;
    await loadGuardrails();
    fillGuardrailForm(undefined);
  } catch (err) {
    $("guardrail-error").textContent = err.message;
  }
}

async function deleteGuardrail(g) {
  if (!window.confirm(`Delete guardrail ${g.name} (${g.id})? This cannot be undone.`)) {
    status(`Guardrail ${g.name} kept.`);
    return;
  }
  try {
    await call("DELETE", `/guardrails/${encodeURIComponent(g.id)}`);
    status(`Guardrail ${g.name} deleted.`);
    if (editingId() === g.id) fillGuardrailForm(undefined);
    if (shownAssignments === g.id) {
      shownAssignments = undefined;
      $("assignments").hidden = true;
    }
    await loadGuardrails();
  } catch (err) {
    status(`Delete ${g.name}: ${err.message}`);
  }
}

/** The guardrail whose assignments are on show, refreshed after each change to them. */
let shownAssignments;

async function unassign(guardrailId, kind, subject, name) {
  const field = kind === "keys" ? "key_hashes" : "member_user_ids";
  try {
    const res = await call(
      "POST",
      `/guardrails/${encodeURIComponent(guardrailId)}/assignments/${kind}/remove`,
      { [field]: [subject] },
    );
    $("assignments-result").textContent = `Unassigned ${name}: ${res.unassigned_count} removed.`;
    await showAssignments(guardrailId);
  } catch (err) {
    $("assignments-result").textContent = err.message;
  }
}

async function showAssignments(guardrailId) {
  const g = guardrails.find((x) => x.id === guardrailId);
  const base = `/guardrails/${encodeURIComponent(guardrailId)}/assignments`;
  try {
    const [keys, members] = await Promise.all([
      call("GET", `${base}/keys?limit=100`),
      call("GET", `${base}/members?limit=100`),
    ]);
    shownAssignments = guardrailId;
    $("assignments-h").textContent = `Assignments of ${g?.name ?? guardrailId}`;
    show(
      "assignments-keys",
      table(
        keys.data,
        ["key_name", "key_label", "key_hash", "created_at"],
        "Assigned keys",
        (a) => [
          button("Unassign", `Unassign key ${a.key_name}`, () =>
            unassign(guardrailId, "keys", a.key_hash, `key ${a.key_name}`),
          ),
        ],
      ),
    );
    show(
      "assignments-members",
      table(members.data, ["user_id", "workspace_id", "created_at"], "Assigned members", (a) => [
        button("Unassign", `Unassign member ${a.user_id}`, () =>
          unassign(guardrailId, "members", a.user_id, `member ${a.user_id}`),
        ),
      ]),
    );
    $("assignments").hidden = false;
  } catch (err) {
    status(`Assignments: ${err.message}`);
  }
}

async function assign(event, kind) {
  event.preventDefault();
  const [select, subject, result, field] =
    kind === "keys"
      ? ["assign-guardrail", "assign-key", "assign-result", "key_hashes"]
      : ["assign-member-guardrail", "assign-member", "assign-member-result", "member_user_ids"];
  const id = $(select).value;
  try {
    const res = await call("POST", `/guardrails/${encodeURIComponent(id)}/assignments/${kind}`, {
      [field]: [$(subject).value.trim()],
    });
    $(result).textContent =
      kind === "keys"
        ? `Assigned: ${res.assigned_count} key(s).`
        : `Assigned: ${res.assigned_count} member(s).`;
    if (shownAssignments === id) await showAssignments(id);
  } catch (err) {
    $(result).textContent = err.message;
  }
}

// ---- keys, workspaces, credits, explain ----

async function loadKeys() {
  const keys = (await call("GET", "/keys?limit=100")).data;
  show(
    "keys-list",
    table(
      keys,
      ["name", "hash", "label", "workspace_id", "member_user_id", "disabled"],
      "Keys",
      (k) => [
        button("Explain", `Explain ${k.name}`, () => {
          $("explain-hash").value = k.hash;
          $("explain-form").requestSubmit();
        }),
      ],
    ),
  );
  options(
    $("assign-key"),
    keys,
    (k) => k.hash,
    (k) => `${k.name} (${k.label})`,
  );
  // Members have no list of their own: the owners of keys are the ones the console can suggest.
  const members = [...new Set(keys.map((k) => k.member_user_id).filter(Boolean))];
  options(
    $("member-ids"),
    members,
    (m) => m,
    (m) => m,
  );
}

async function loadWorkspaces() {
  const workspaces = (await call("GET", "/workspaces?limit=100")).data;
  show(
    "workspaces-list",
    table(workspaces, ["name", "id", "slug", "default_guardrail_id"], "Workspaces", (w) => [
      button("Edit default guardrail", `Edit the default guardrail of ${w.name}`, () =>
        editWorkspaceDefault(w),
      ),
    ]),
  );
  const choices = [{ id: "", name: "the default workspace" }, ...workspaces];
  for (const id of ["g-workspace", "g-list-workspace"]) {
    const chosen = $(id).value;
    options(
      $(id),
      choices,
      (w) => w.id,
      (w) => (w.id ? `${w.name} (${w.id})` : w.name),
    );
    $(id).value = chosen;
  }
}

function workspaceShown(id) {
  return [...$("g-list-workspace").options].some((o) => o.value === id);
}

/**
 * A workspace's default guardrail applies to all its traffic. Until configured it reads as 404;
 * a PATCH (this form's save) materializes it, so the form opens on its defaults then.
 */
async function editWorkspaceDefault(w) {
  const id = w.default_guardrail_id;
  const res = await fetch(`${API}/guardrails/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${managementKey()}` },
  });
  if (res.status !== 404 && !res.ok) {
    status(`Default guardrail of ${w.name}: ${await errorMessage(res)}`);
    return;
  }
  const g =
    res.status === 404
      ? { id, name: `Workspace ${w.id} Default`, workspace_id: w.id }
      : (await res.json()).data;
  fillGuardrailForm(g);
  status(
    res.status === 404
      ? `The default guardrail of ${w.name} is not configured yet: saving configures it.`
      : `Editing the default guardrail of ${w.name}.`,
  );
  $("g-name").focus();
}

async function loadCredits() {
  $("credits-out").textContent = JSON.stringify(await call("GET", "/credits"), null, 2);
}

async function explain(event) {
  event.preventDefault();
  const hash = $("explain-hash").value.trim();
  try {
    const res = await call("GET", `/keys/${encodeURIComponent(hash)}/explain`);
    $("explain-out").textContent = JSON.stringify(res, null, 2);
  } catch (err) {
    $("explain-out").textContent = err.message;
  }
}

const loaders = {
  guardrails: loadGuardrails,
  keys: loadKeys,
  workspaces: loadWorkspaces,
  credits: loadCredits,
};

async function refresh(name) {
  try {
    await loaders[name]();
  } catch (err) {
    status(`${name}: ${err.message}`);
  }
}

// ---- sign in ----

async function signIn(key) {
  // Any management route answers 401/403 for a wrong key: the list of workspaces is a cheap one.
  const res = await fetch(`${API}/workspaces?limit=1`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (!res.ok) throw new Error(await errorMessage(res));
  rememberKey(key);
  $("signin").hidden = true;
  $("admin").hidden = false;
  $("nav").hidden = false;
  status("Signed in.");
  await Promise.all(Object.keys(loaders).map(refresh));
}

function signOut() {
  forgetKey();
  // Nothing of the last session stays on screen for the next one.
  fillGuardrailForm(undefined);
  shownAssignments = undefined;
  $("assignments").hidden = true;
  $("admin").hidden = true;
  $("nav").hidden = true;
  $("signin").hidden = false;
  status("Signed out.");
  $("management-key").focus();
}

// ---- speech playground ----

async function loadModels() {
  try {
    const res = await fetch(`${API}/models?output_modalities=speech`);
    if (!res.ok) throw new Error(await errorMessage(res));
    const models = (await res.json()).data;
    options(
      $("p-model"),
      models,
      (m) => m.id,
      (m) => m.name || m.id,
    );
  } catch (err) {
    $("speak-error").textContent = `Models: ${err.message}`;
  }
}

let received = 0;
/** How this answer is played, said in the result so a listener knows what to expect. */
let mode = "";

function progress(done) {
  $("speak-result").textContent = done
    ? `Done: received ${received} bytes of audio (${mode}).`
    : `Receiving: ${received} bytes of audio (${mode}).`;
}

/** mp3 through MediaSource: playback starts with the first chunk, not at the end. */
function playStreaming(audio, reader) {
  const media = new MediaSource();
  audio.src = URL.createObjectURL(media);
  return new Promise((resolve, reject) => {
    media.addEventListener(
      "sourceopen",
      async () => {
        try {
          const buffer = media.addSourceBuffer("audio/mpeg");
          const appended = () =>
            new Promise((r) => buffer.addEventListener("updateend", r, { once: true }));
          audio.play().catch(() => {
            // autoplay may be refused; the controls are there to press play
          });
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            received += value.byteLength;
            progress(false);
            buffer.appendBuffer(value);
            await appended();
          }
          media.endOfStream();
          resolve();
        } catch (err) {
          reject(err);
        }
      },
      { once: true },
    );
  });
}

/** Other formats, or no MediaSource for mp3: collect the stream, then play it. */
async function playCollected(audio, reader, type) {
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    progress(false);
  }
  audio.src = URL.createObjectURL(new Blob(chunks, { type }));
  await audio.play().catch(() => {
    // autoplay may be refused; the controls are there to press play
  });
}

async function speak(event) {
  event.preventDefault();
  $("speak-error").textContent = "";
  $("speak-result").textContent = "Requesting…";
  received = 0;
  const format = $("p-format").value;
  try {
    const res = await fetch(`${API}/audio/speech`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${$("p-key").value}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: $("p-model").value,
        voice: $("p-voice").value,
        input: $("p-text").value,
        response_format: format,
      }),
    });
    if (!res.ok) {
      $("speak-result").textContent = "";
      $("speak-error").textContent = await errorMessage(res);
      return;
    }
    const generation = res.headers.get("x-generation-id");
    if (generation) $("generation-id").value = generation;
    const audio = $("p-audio");
    const reader = res.body.getReader();
    const streaming =
      format === "mp3" && "MediaSource" in window && MediaSource.isTypeSupported("audio/mpeg");
    mode = streaming ? "played as it arrived" : "played when complete";
    if (streaming) await playStreaming(audio, reader);
    else await playCollected(audio, reader, res.headers.get("content-type") ?? "audio/wav");
    progress(true);
  } catch (err) {
    $("speak-error").textContent = `Playback failed: ${err.message}`;
  }
}

async function lookUpGeneration(event) {
  event.preventDefault();
  const id = $("generation-id").value.trim();
  try {
    const res = await call(
      "GET",
      `/generation?id=${encodeURIComponent(id)}`,
      undefined,
      $("p-key").value,
    );
    $("generation-out").textContent = JSON.stringify(res, null, 2);
  } catch (err) {
    $("generation-out").textContent = err.message;
  }
}

// ---- wiring ----

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await signIn($("management-key").value);
    $("management-key").value = "";
  } catch (err) {
    status(`Sign-in failed: ${err.message}`);
  }
});
$("signout").addEventListener("click", signOut);
$("guardrail-form").addEventListener("submit", saveGuardrail);
$("g-list-workspace").addEventListener("change", () => refresh("guardrails"));
$("g-new").addEventListener("click", () => {
  fillGuardrailForm(undefined);
  $("g-name").focus();
});
$("assign-form").addEventListener("submit", (event) => assign(event, "keys"));
$("assign-member-form").addEventListener("submit", (event) => assign(event, "members"));
$("explain-form").addEventListener("submit", explain);
$("speak-form").addEventListener("submit", speak);
$("generation-form").addEventListener("submit", lookUpGeneration);
for (const b of document.querySelectorAll("[data-load]")) {
  b.addEventListener("click", () => refresh(b.dataset.load));
}

// The API's own document (public) says which builtin filters, actions and regions exist.
setupGuardrailForm(await (await fetch(`${API}/openapi.json`)).json());
fillGuardrailForm(undefined);
loadModels();
if (managementKey()) {
  signIn(managementKey()).catch(() => signOut());
}
