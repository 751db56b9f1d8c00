import { ACCOUNT_DOC } from "./types.js";

/**
 * The scope a policy write invalidates: its workspace, or every scope ("*") for the account's
 * workspace-wide policies, which may govern any workspace.
 */
export function announced(docKey: string): string {
  return docKey === ACCOUNT_DOC ? "*" : docKey;
}
