/**
 * The control plane's former entry (`dist/apps/guardrail/main.js`), kept for one release so
 * deployments that still run it keep working: it says once that it is deprecated, then starts
 * the control plane itself.
 */
import { componentLogger } from "../../platform/observability/logger.js";

componentLogger("control-plane").warn(
  { entry: "dist/apps/guardrail/main.js", replacement: "dist/apps/control-plane/main.js" },
  "dist/apps/guardrail/main.js is deprecated and will be removed in the next release: run dist/apps/control-plane/main.js",
);
await import("../control-plane/main.js");
