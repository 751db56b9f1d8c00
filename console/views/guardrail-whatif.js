// A guardrail's what-if and shadow (console/lib/whatif-panel.js, shadow-panel.js) on the
// Guardrails view; "take the edit form's change" reads guardrail-form.js.

import { call } from "../lib/api.js";
import { shadowPanel } from "../lib/shadow-panel.js";
import { whatIfPanel } from "../lib/whatif-panel.js";
import { editingId, guardrailRequest } from "./guardrail-form.js";

const path = (g) => `/guardrails/${encodeURIComponent(g.id)}`;

/** The guardrail says whether a shadow runs, so no request is answered 404 on the way. */
async function readShadow(g) {
  const current = await call("GET", path(g));
  if (!current.data.shadow) return undefined;
  return (await call("GET", `${path(g)}/shadow`)).data;
}

/** The changes made in the edit form to this guardrail, as the JSON the replay takes. */
function takeEdit(g) {
  if (editingId() !== g?.id)
    throw new Error(
      `The edit form is not on ${g?.name}: choose Edit on it, change fields, then take them.`,
    );
  const change = guardrailRequest();
  if (Object.keys(change).length === 0)
    throw new Error("The edit form has no change yet: edit a field first.");
  return change;
}

const panel = whatIfPanel({
  prefix: "whatif",
  path,
  takeEdit,
  example: '{"limit_usd": 5}',
  shadow: shadowPanel({
    prefix: "shadow",
    path: (g) => `${path(g)}/shadow`,
    read: readShadow,
    kind: "guardrail",
  }),
});

export const showWhatIf = panel.show;
export const hideWhatIf = panel.hide;

export function setupWhatIf() {
  panel.setup();
}
