// The guardrail form: every writable field of the API's guardrail, read into the API's own JSON
// shape, and the request body that a create or an update (PATCH: only the fields that changed)
// sends. The API validates; the console keeps no second set of rules.

const $ = (id) => document.getElementById(id);

/**
 * The guardrail's enumerations (builtin filters, actions, scan scopes, regions) as the API's own
 * OpenAPI document states them: the console keeps no copy of a list the service owns.
 */
const vocabulary = { builtins: [], scoped: "", actions: [], scopes: [], regions: [] };

const enumOf = (schema) => (schema?.enum ?? []).filter((v) => v !== null);

/** Reads the vocabulary from the guardrail create body's schema in /api/v1/openapi.json. */
function readVocabulary(doc) {
  const body = doc.paths["/api/v1/guardrails"].post.requestBody.content["application/json"].schema;
  const builtin = body.properties.content_filter_builtins.items;
  vocabulary.builtins = enumOf(builtin.properties.slug);
  vocabulary.actions = enumOf(builtin.properties.action);
  vocabulary.scopes = enumOf(builtin.properties.scan_scope);
  vocabulary.scoped = builtin.allOf?.[0]?.then?.properties?.slug?.const ?? "";
  vocabulary.regions = enumOf(body.properties.allowed_data_regions.items);
}

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
function builtinRow(slug) {
  const div = document.createElement("div");
  div.className = "row";
  const id = `g-builtin-${slug}`;
  div.append(
    labelFor(id, `Builtin filter ${slug}`),
    select(id, [["", "off"], ...vocabulary.actions.map((a) => [a, a])], ""),
  );
  if (slug === vocabulary.scoped) {
    const scope = `${id}-scope`;
    div.append(
      labelFor(scope, `Builtin filter ${slug}: messages scanned`),
      select(
        scope,
        vocabulary.scopes.map((v) => [v, v.replaceAll("_", " ")]),
        vocabulary.scopes.includes("all_messages") ? "all_messages" : vocabulary.scopes[0],
      ),
    );
  }
  return div;
}

/** One checkbox per ingress region, labelled by its name. */
function regionBox(region) {
  const label = document.createElement("label");
  label.className = "check";
  const box = document.createElement("input");
  box.type = "checkbox";
  box.name = "g-region";
  box.value = region;
  label.append(box, ` ${region}`);
  return label;
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
      vocabulary.actions.map((a) => [a, a]),
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

export function setupGuardrailForm(openapi) {
  readVocabulary(openapi);
  $("g-builtins").replaceChildren(...vocabulary.builtins.map(builtinRow));
  $("g-regions").replaceChildren(...vocabulary.regions.map(regionBox));
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
  for (const slug of vocabulary.builtins) {
    const b = v.content_filter_builtins?.find((x) => x.slug === slug);
    $(`g-builtin-${slug}`).value = b?.action ?? "";
    if (slug === vocabulary.scoped)
      $(`g-builtin-${slug}-scope`).value = b?.scan_scope ?? "all_messages";
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
      vocabulary.builtins
        .filter((slug) => $(`g-builtin-${slug}`).value)
        .map((slug) => ({
          slug,
          action: $(`g-builtin-${slug}`).value,
          ...(slug === vocabulary.scoped ? { scan_scope: $(`g-builtin-${slug}-scope`).value } : {}),
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
