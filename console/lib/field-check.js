// Input checked where it is typed: money fields ("$1,50" is not an amount) and lists of models
// or providers (a name the catalog does not have) are marked beside the field as soon as the
// field is left, and a form does not send them. The API still validates everything it receives.

import { el } from "./dom.js";

const AMOUNT = /^-?(\d+(\.\d*)?|\.\d+)$/;

/** The message beside a field (made once, after it), and the field's aria-invalid. */
export function markField(input, message, { warning = false } = {}) {
  const id = `${input.id}-note`;
  let note = document.getElementById(id);
  if (!note) {
    note = el("p", { id, className: "field-note", role: "alert" });
    input.insertAdjacentElement("afterend", note);
    const described = input.getAttribute("aria-describedby");
    input.setAttribute("aria-describedby", described ? `${described} ${id}` : id);
  }
  note.textContent = message;
  note.classList.toggle("warning", warning);
  if (message && !warning) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

function labelOf(input) {
  return input.labels?.[0]?.textContent.replace(/\s*\(.*$/, "") ?? input.id;
}

/** What is wrong with a money field's text, or "" (empty is fine: the form says what it means). */
export function moneyProblem(input) {
  const v = input.value.trim();
  if (v === "" || AMOUNT.test(v)) return "";
  return `${labelOf(input)}: “${v}” is not an amount in dollars. Write digits with a dot for cents, like 1.50 (no $, no commas).`;
}

/** The catalog's names, set once the models are read: ids of models, names of providers. */
const catalog = { models: new Set(), providers: new Set() };

export function setCatalog(models) {
  catalog.models = new Set(models.map((m) => m.id));
  catalog.providers = new Set(models.flatMap((m) => (m.endpoints ?? []).map((e) => e.provider)));
  for (const input of document.querySelectorAll("input[data-catalog]")) addPicker(input);
}

function listOf(input) {
  return input.value
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
}

/** The names of a list field that the catalog does not have (none while it is not read yet). */
function unknownNames(input) {
  const known = catalog[input.dataset.catalog];
  if (known.size === 0) return [];
  return listOf(input).filter((name) => !known.has(name));
}

function catalogWarning(input) {
  const unknown = unknownNames(input);
  if (unknown.length === 0) return "";
  const kind = input.dataset.catalog === "models" ? "model" : "provider";
  return `Not in the catalog: ${unknown.join(", ")}. Requests never match an unknown ${kind}; save again to keep it anyway.`;
}

/** A "pick from the catalog" menu under a list field: each choice is added to the list. */
function addPicker(input) {
  const id = `${input.id}-pick`;
  document.getElementById(id)?.remove();
  const kind = input.dataset.catalog === "models" ? "model" : "provider";
  const picker = el(
    "select",
    {
      id,
      className: "catalog-pick",
      // Named apart from its field's label, which people and tests find the field by.
      "aria-label": `Add a catalog ${kind} to the ${labelOf(input).split(" ")[0].toLowerCase()} list`,
    },
    el("option", { value: "" }, `Add a ${kind} from the catalog…`),
    ...[...catalog[input.dataset.catalog]]
      .sort()
      .map((name) => el("option", { value: name }, name)),
  );
  picker.addEventListener("change", () => {
    if (!picker.value) return;
    const names = listOf(input);
    if (!names.includes(picker.value)) input.value = [...names, picker.value].join(", ");
    picker.value = "";
    checkField(input);
  });
  (document.getElementById(`${input.id}-note`) ?? input).insertAdjacentElement("afterend", picker);
}

/** Checks one field now; returns whether it may be sent as it is. */
function checkField(input, submitting = false) {
  if (input.dataset.money !== undefined) {
    const problem = moneyProblem(input);
    markField(input, problem);
    return problem === "";
  }
  const warning = catalogWarning(input);
  markField(input, warning, { warning: true });
  if (!warning || !submitting) return true;
  // Warned once for this very text: a second save keeps it.
  if (input.dataset.warned === input.value) return true;
  input.dataset.warned = input.value;
  return false;
}

/**
 * Every money field (data-money) and catalog list (data-catalog) of the page: checked when left,
 * its mark cleared as it is corrected, and its form held back (before the form's own handler)
 * while one is wrong or unknown names were not yet warned about.
 */
export function setupFieldChecks() {
  const fields = () => document.querySelectorAll("input[data-money], input[data-catalog]");
  for (const input of fields()) {
    input.addEventListener("change", () => checkField(input));
    input.addEventListener("input", () => {
      if (input.getAttribute("aria-invalid") === "true") checkField(input);
    });
  }
  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      const wrong = [...form.querySelectorAll("input[data-money], input[data-catalog]")].filter(
        (input) => !checkField(input, true),
      );
      if (wrong.length === 0) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      wrong[0].focus();
    },
    true,
  );
}

/** Clears the marks of a form's fields (a form reset or filled for another item). */
export function clearMarks(form) {
  for (const input of form.querySelectorAll("input[data-money], input[data-catalog]")) {
    markField(input, "");
    delete input.dataset.warned;
  }
}
