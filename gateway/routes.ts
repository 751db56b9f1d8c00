import type { Route } from "./context.js";
import { metricsRoutes } from "./metrics.js";
import { activityRoutes } from "./routes/activity.js";
import { assignmentRoutes } from "./routes/assignments.js";
import { auditLogRoutes } from "./routes/audit-log.js";
import { consoleRoutes } from "./routes/console.js";
import { creditRoutes } from "./routes/credits.js";
import { docRoutes } from "./routes/docs.js";
import { explainRoutes } from "./routes/explain.js";
import { generationRoutes } from "./routes/generations.js";
import { guardrailPolicyRoutes } from "./routes/guardrail-policies.js";
import { guardrailPolicyShadowRoutes } from "./routes/guardrail-policy-shadow.js";
import { guardrailPolicyVersionRoutes } from "./routes/guardrail-policy-versions.js";
import { guardrailShadowRoutes } from "./routes/guardrail-shadow.js";
import { guardrailVersionRoutes } from "./routes/guardrail-versions.js";
import { guardrailRoutes } from "./routes/guardrails.js";
import { healthRoutes } from "./routes/health.js";
import { keyRoutes } from "./routes/keys.js";
import { modelRoutes } from "./routes/models.js";
import { speechRoutes } from "./routes/speech.js";
import { usageRoutes } from "./routes/usage.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { workspaceRoutes } from "./routes/workspaces.js";

/** Order matters: static paths before parameterised ones that could also match. */
export const routes: Route[] = [
  ...healthRoutes,
  ...metricsRoutes,
  ...assignmentRoutes,
  ...guardrailPolicyRoutes,
  ...guardrailPolicyVersionRoutes,
  ...guardrailPolicyShadowRoutes,
  ...guardrailVersionRoutes,
  ...guardrailShadowRoutes,
  ...guardrailRoutes,
  ...explainRoutes,
  ...keyRoutes,
  ...creditRoutes,
  ...auditLogRoutes,
  ...workspaceRoutes,
  ...webhookRoutes,
  ...speechRoutes,
  ...generationRoutes,
  ...activityRoutes,
  ...usageRoutes,
  ...modelRoutes,
  ...docRoutes(() => routes),
  ...consoleRoutes,
];
