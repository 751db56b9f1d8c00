import { type DescMessage, isFieldSet, type MessageShape } from "@bufbuild/protobuf";
import { invalidArgument } from "../../platform/errors.js";

/**
 * The mask rules of AccountService updates (workspaces, keys), the ones
 * GuardrailService applies too (services/guardrail/request-rules.ts): an
 * update names what it changes in update_mask, a field named but unset being
 * the client's null. An empty mask would change nothing but updated_at, and a
 * field set outside the mask would be silently dropped: both are refused, so
 * a plain gRPC client gets the answer an HTTP client gets.
 */
export function checkUpdateMask<D extends DescMessage>(
  schema: D,
  req: MessageShape<D>,
  paths: readonly string[],
  updatable: readonly string[],
): void {
  if (paths.length === 0) {
    throw invalidArgument(
      `Update is empty: send at least one of ${updatable.join(", ")} (update_mask must name at least 1 field)`,
    );
  }
  for (const field of schema.fields) {
    if (!updatable.includes(field.name)) continue;
    if (isFieldSet(req, field) && !paths.includes(field.name)) {
      throw invalidArgument(
        `${field.name} is set but update_mask does not name it: add "${field.name}" to update_mask, or leave the field unset`,
      );
    }
  }
}
