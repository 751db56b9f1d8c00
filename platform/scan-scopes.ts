import { type ScanScope, ScanScopeSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/** Which text a scoped builtin filter scans (railgate.guardrail.v1.ScanScope): "user_only", "all_messages". */
export type ScanScopeName = EnumApiName<typeof ScanScope>;

export const SCAN_SCOPES = enumNames<typeof ScanScope>(ScanScopeSchema);
