// The guardrail form: every writable field of the API's guardrail, read into the API's own JSON
// shape, and the request body that a create or an update (PATCH: only the fields that changed)
// sends. The API validates; the console keeps no second set of rules.

const $ = (id) => document.getElementById(id);

/** The builtin filters the API knows (docs: gaps-filled "Builtin content filters"). */
const BUILTINS = [
  ["email", "Email addresses"],
  ["phone", "Phone numbers"],
  ["ssn", "Social security numbers"],
  ["credit-card", "Credit card numbers"],
  ["ip-address", "IP addresses"],
  ["person-name", "Person names"],
  ["address", "Postal addresses"],
  ["regex-prompt-injection", "Prompt injection"],
];
/** The one builtin that takes a scan_scope. */
const SCOPED = "regex-prompt-injection";
const ACTIONS = ["block", "redact", "flag"];

const LISTS = {
  allowed_models: "g-models",
  ignored_models: "g-ignored-models",
  allowed_providers: "g-providers",
  ignored_providers: "g-ignored-providers",
};

function checkboxes() {
  return [...document.querySelectorAll("#guardrail-form input[data-field]")];
}

function tristates() {
  return [...document.querySelectorAll("#guardrail-form select[data-tristate]")];
}

function vendorBoxes() {
  return checkboxes().filter((b) => b.dataset.field.startsWith("enforce_zdr_"));
}

function select(id, values, selected) {
  const s = document.createElement("select");
  s.id = id;
  for (const [value, text] of values) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    s.append(o);
  }
  s.value = selected;
  return s;
}

function labelFor(id, text) {
  const l = document.createElement("label");
  l.htmlFor = id;
  l.textContent = text;
  return l;
}

/** One builtin's controls: an action ("off" = not in the list) and, for the scoped one, a scope. */
function builtinRow([slug, title]) {
  const div = document.createElement("div");
  div.className = "row";
  const id = `g-builtin-${slug}`;
  div.append(
    labelFor(id, `${title} (${slug})`),
    select(id, [["", "off"], ...ACTIONS.map((a) => [a, a])], ""),
  );
  if (slug === SCOPED) {
    const scope = `${id}-scope`;
    div.append(
      labelFor(scope, `${title}: messages scanned`),
      select(
        scope,
        [
          ["all_messages", "all messages"],
          ["user_only", "user messages only"],
        ],
        "all_messages",
      ),
    );
  }
  return div;
}

/** Renumbers the custom filter rows so that every label and button names its own row. */
function renumberFilters() {
  [...$("g-filters").children].forEach((li, i) => {
    const n = i + 1;
    for (const [part, text] of [
      ["pattern", `Pattern ${n} (regular expression)`],
      ["action", `Action of filter ${n}`],
      ["label", `Redaction label ${n} (optional)`],
    ]) {
      const control = li.querySelector(`[data-part="${part}"]`);
      control.id = `g-filter-${n}-${part}`;
      const label = li.querySelector(`label[data-for="${part}"]`);
      label.htmlFor = control.id;
      label.textContent = text;
    }
    li.querySelector("button").textContent = `Remove filter ${n}`;
  });
}

function addFilterRow(filter) {
  const li = document.createElement("li");
  const part = (name, control) => {
    const label = document.createElement("label");
    label.dataset.for = name;
    control.dataset.part = name;
    li.append(label, control);
  };
  const pattern = document.createElement("input");
  pattern.value = filter?.pattern ?? "";
  part("pattern", pattern);
  part(
    "action",
    select(
      "",
      ACTIONS.map((a) => [a, a]),
      filter?.action ?? "block",
    ),
  );
  const label = document.createElement("input");
  label.value = filter?.label ?? "";
  part("label", label);
  const remove = document.createElement("button");
  remove.type = "button";
  remove.addEventListener("click", () => {
    li.remove();
    renumberFilters();
    $("g-add-filter").focus();
  });
  li.append(remove);
  $("g-filters").append(li);
  renumberFilters();
  return li;
}

function syncZdrAll() {
  $("g-zdr-all").checked = vendorBoxes().every((b) => b.checked);
}

export function setupGuardrailForm() {
  $("g-builtins").replaceChildren(...BUILTINS.map(builtinRow));
  $("g-add-filter").addEventListener("click", () => {
    addFilterRow(undefined).querySelector("input").focus();
  });
  // A shortcut for the five flags, not the deprecated enforce_zdr: what is sent is what is shown.
  $("g-zdr-all").addEventListener("change", () => {
    for (const b of vendorBoxes()) b.checked = $("g-zdr-all").checked;
  });
  for (const b of vendorBoxes()) b.addEventListener("change", syncZdrAll);
}

function joinList(v) {
  return (v ?? []).join(", ");
}

/** A comma-separated field; empty is null, the API's "no restriction" (an empty list is refused). */
function splitList(s) {
  const items = s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length > 0 ? items : null;
}

function nonEmpty(list) {
  return list.length > 0 ? list : null;
}

/** The API's guardrail JSON as the form holds it: the fields it writes, in one representation. */
export function writable(g) {
  const out = {
    name: g?.name ?? "",
    description: g?.description ?? "",
    allowed_data_regions: g?.allowed_data_regions ?? null,
    content_filter_builtins:
      g?.content_filter_builtins?.map((b) => ({
        slug: b.slug,
        action: b.action,
        ...(b.scan_scope ? { scan_scope: b.scan_scope } : {}),
      })) ?? null,
    content_filters:
      g?.content_filters?.map((f) => ({
        pattern: f.pattern,
        action: f.action,
        label: f.label || null,
      })) ?? null,
    limit_usd: g?.limit_usd ?? null,
    reset_interval: g?.reset_interval ?? null,
  };
  for (const field of Object.keys(LISTS)) out[field] = g?.[field] ?? null;
  for (const b of checkboxes()) out[b.dataset.field] = g?.[b.dataset.field] ?? false;
  for (const s of tristates()) out[s.dataset.tristate] = g?.[s.dataset.tristate] ?? null;
  return out;
}

/** The guardrail being edited (as the API last returned it), or undefined for a new one. */
let editing;

export function editingId() {
  return editing?.id;
}

export function fillGuardrailForm(g) {
  editing = g;
  const v = writable(g);
  $("g-id").value = g?.id ?? "";
  $("g-name").value = v.name;
  $("g-description").value = v.description;
  $("g-workspace").value = g?.workspace_id ?? "";
  // workspace_id cannot change by an update: shown, not editable.
  $("g-workspace").disabled = Boolean(g);
  for (const [field, id] of Object.entries(LISTS)) $(id).value = joinList(v[field]);
  for (const box of document.querySelectorAll('input[name="g-region"]')) {
    box.checked = (v.allowed_data_regions ?? []).includes(box.value);
  }
  for (const b of checkboxes()) b.checked = v[b.dataset.field] === true;
  for (const s of tristates()) {
    const value = v[s.dataset.tristate];
    s.value = value === null ? "" : String(value);
  }
  syncZdrAll();
  for (const [slug] of BUILTINS) {
    const b = v.content_filter_builtins?.find((x) => x.slug === slug);
    $(`g-builtin-${slug}`).value = b?.action ?? "";
    if (slug === SCOPED) $(`g-builtin-${slug}-scope`).value = b?.scan_scope ?? "all_messages";
  }
  $("g-filters").replaceChildren();
  for (const f of v.content_filters ?? []) addFilterRow(f);
  $("g-limit").value = v.limit_usd ?? "";
  $("g-reset").value = v.reset_interval ?? "";
  $("guardrail-form-h").textContent = g ? `Edit guardrail ${g.name}` : "Create a guardrail";
  $("g-submit").textContent = g ? "Save" : "Create";
  $("guardrail-error").textContent = "";
}

/** The form's values in the same shape as writable(). */
function formValues() {
  const v = {
    name: $("g-name").value,
    description: $("g-description").value,
    allowed_data_regions: nonEmpty(
      [...document.querySelectorAll('input[name="g-region"]:checked')].map((b) => b.value),
    ),
    content_filter_builtins: nonEmpty(
      BUILTINS.filter(([slug]) => $(`g-builtin-${slug}`).value).map(([slug]) => ({
        slug,
        action: $(`g-builtin-${slug}`).value,
        ...(slug === SCOPED ? { scan_scope: $(`g-builtin-${slug}-scope`).value } : {}),
      })),
    ),
    content_filters: nonEmpty(
      [...$("g-filters").children].map((li) => ({
        pattern: li.querySelector('[data-part="pattern"]').value,
        action: li.querySelector('[data-part="action"]').value,
        label: li.querySelector('[data-part="label"]').value || null,
      })),
    ),
    reset_interval: $("g-reset").value || null,
  };
  const limit = $("g-limit").value.trim();
  // Sent as typed: a non-number goes to the API as a string and its message names the field.
  v.limit_usd = limit === "" ? null : Number.isNaN(Number(limit)) ? limit : Number(limit);
  for (const [field, id] of Object.entries(LISTS)) v[field] = splitList($(id).value);
  for (const b of checkboxes()) v[b.dataset.field] = b.checked;
  for (const s of tristates()) v[s.dataset.tristate] = s.value === "" ? null : s.value === "true";
  return v;
}

/** For comparing only: a set's order (regions, builtins by slug) is no change. */
function comparable(field, value) {
  if (!Array.isArray(value)) return JSON.stringify(value);
  if (field === "allowed_data_regions") return JSON.stringify([...value].sort());
  if (field === "content_filter_builtins") {
    return JSON.stringify([...value].sort((a, b) => a.slug.localeCompare(b.slug)));
  }
  return JSON.stringify(value);
}

/**
 * The request body: the fields whose value differs from the guardrail being edited (PATCH: the
 * keys sent are the update mask) or from a new guardrail's defaults (create; name always). The
 * limit and its interval are checked together by the API, so either one brings the other.
 */
export function guardrailRequest() {
  const now = formValues();
  const before = writable(editing);
  const body = {};
  for (const [field, value] of Object.entries(now)) {
    if (comparable(field, value) !== comparable(field, before[field])) body[field] = value;
  }
  if ("limit_usd" in body || "reset_interval" in body) {
    body.limit_usd = now.limit_usd;
    body.reset_interval = now.reset_interval;
  }
  if ("description" in body) body.description = now.description || null;
  if (!editing) {
    body.name = now.name;
    if ($("g-workspace").value) body.workspace_id = $("g-workspace").value;
  }
  return body;
}
