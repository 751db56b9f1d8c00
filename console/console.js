// Railgate console: plain DOM, no framework. Every call goes to this gateway's own /api/v1 with
// a Bearer key; the management key lives in sessionStorage so it ends with the tab.

const API = "/api/v1";
const STORE = "railgate.managementKey";

const $ = (id) => document.getElementById(id);

function managementKey() {
  return sessionStorage.getItem(STORE) ?? "";
}

/** The API's own message, verbatim: it names the field and the rule. */
async function errorMessage(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body?.error?.message) return `${res.status}: ${body.error.message}`;
  } catch {
    // not JSON: show what came
  }
  return `${res.status}: ${text || res.statusText}`;
}

/** Calls the API; resolves to the parsed JSON, or throws an Error carrying the API's message. */
async function call(method, path, body, key = managementKey()) {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${API}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(await errorMessage(res));
  return res.json();
}

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

function editButton(g) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = "Edit";
  b.setAttribute("aria-label", `Edit ${g.name}`);
  b.addEventListener("click", () => fillGuardrailForm(g));
  return b;
}

async function loadGuardrails() {
  guardrails = (await call("GET", "/guardrails?limit=100")).data;
  show(
    "guardrails-list",
    table(
      guardrails,
      ["name", "id", "allowed_models", "content_filters", "limit_usd", "reset_interval"],
      "Guardrails",
      (g) => [editButton(g)],
    ),
  );
  options(
    $("assign-guardrail"),
    guardrails,
    (g) => g.id,
    (g) => g.name,
  );
}

/** A comma-separated field; empty is null, the API's "no restriction" (an empty list is refused). */
function list(s) {
  const items = s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length > 0 ? items : null;
}

function fillGuardrailForm(g) {
  $("g-id").value = g?.id ?? "";
  $("g-name").value = g?.name ?? "";
  $("g-description").value = g?.description ?? "";
  $("g-models").value = (g?.allowed_models ?? []).join(", ");
  $("g-regions").value = (g?.allowed_data_regions ?? []).join(", ");
  const filter = g?.content_filters?.[0];
  $("g-filter-pattern").value = filter?.pattern ?? "";
  $("g-filter-action").value = filter?.action ?? "block";
  $("g-limit").value = g?.limit_usd ?? "";
  $("g-reset").value = g?.reset_interval ?? "";
  $("guardrail-form-h").textContent = g ? `Edit guardrail ${g.name}` : "Create a guardrail";
  $("g-submit").textContent = g ? "Save" : "Create";
  $("guardrail-error").textContent = "";
  $("g-name").focus();
}

/** The form as a request body; the API validates it (no second set of rules here). */
function guardrailBody() {
  const body = {
    name: $("g-name").value,
    description: $("g-description").value || null,
    allowed_models: list($("g-models").value),
    allowed_data_regions: list($("g-regions").value),
    content_filters: $("g-filter-pattern").value
      ? [{ pattern: $("g-filter-pattern").value, action: $("g-filter-action").value }]
      : [],
    reset_interval: $("g-reset").value || null,
  };
  const limit = $("g-limit").value.trim();
  // Sent as typed: a non-number goes to the API as a string and its message names the field.
  body.limit_usd = limit === "" ? null : Number.isNaN(Number(limit)) ? limit : Number(limit);
  return body;
}

async function saveGuardrail(event) {
  event.preventDefault();
  const id = $("g-id").value;
  $("guardrail-error").textContent = "";
  try {
    const res = id
      ? await call("PATCH", `/guardrails/${encodeURIComponent(id)}`, guardrailBody())
      : await call("POST", "/guardrails", guardrailBody());
    status(`Guardrail ${res.data.name} ${id ? "saved" : "created"} (${res.data.id}).`);
    await loadGuardrails();
    fillGuardrailForm(undefined);
  } catch (err) {
    $("guardrail-error").textContent = err.message;
  }
}

async function assign(event) {
  event.preventDefault();
  const id = $("assign-guardrail").value;
  const hash = $("assign-key").value;
  try {
    const res = await call("POST", `/guardrails/${encodeURIComponent(id)}/assignments/keys`, {
      key_hashes: [hash],
    });
    $("assign-result").textContent = `Assigned: ${res.assigned_count} key(s).`;
  } catch (err) {
    $("assign-result").textContent = err.message;
  }
}

// ---- keys, workspaces, credits, explain ----

async function loadKeys() {
  const keys = (await call("GET", "/keys?limit=100")).data;
  show(
    "keys-list",
    table(keys, ["name", "hash", "label", "workspace_id", "disabled"], "Keys", (k) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Explain";
      b.setAttribute("aria-label", `Explain ${k.name}`);
      b.addEventListener("click", () => {
        $("explain-hash").value = k.hash;
        $("explain-form").requestSubmit();
      });
      return [b];
    }),
  );
  options(
    $("assign-key"),
    keys,
    (k) => k.hash,
    (k) => `${k.name} (${k.label})`,
  );
}

async function loadWorkspaces() {
  const workspaces = (await call("GET", "/workspaces?limit=100")).data;
  show("workspaces-list", table(workspaces, ["name", "id", "slug"], "Workspaces"));
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
  sessionStorage.setItem(STORE, key);
  $("signin").hidden = true;
  $("admin").hidden = false;
  $("nav").hidden = false;
  status("Signed in.");
  await Promise.all(Object.keys(loaders).map(refresh));
}

function signOut() {
  sessionStorage.removeItem(STORE);
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
$("g-new").addEventListener("click", () => fillGuardrailForm(undefined));
$("assign-form").addEventListener("submit", assign);
$("explain-form").addEventListener("submit", explain);
$("speak-form").addEventListener("submit", speak);
$("generation-form").addEventListener("submit", lookUpGeneration);
for (const b of document.querySelectorAll("[data-load]")) {
  b.addEventListener("click", () => refresh(b.dataset.load));
}

loadModels();
if (managementKey()) {
  signIn(managementKey()).catch(() => signOut());
}
