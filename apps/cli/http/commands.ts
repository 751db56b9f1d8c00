import type { Command } from "../command.js";
import { accountApiCommands } from "./resources/accounts.js";
import { guardrailApiCommands } from "./resources/guardrails.js";
import { logApiCommands } from "./resources/logs.js";
import { modelApiCommands } from "./resources/models.js";
import { policyApiCommands } from "./resources/policies.js";
import { policyShadowApiCommands } from "./resources/policy-shadow.js";
import { speakApiCommand } from "./resources/speech.js";
import { webhookApiCommands } from "./resources/webhooks.js";

/** Every command over the HTTP API (the default transport), in the order --help lists them. */
export const HTTP_COMMANDS: Command[] = [
  ...accountApiCommands,
  ...guardrailApiCommands,
  ...policyApiCommands,
  ...policyShadowApiCommands,
  ...webhookApiCommands,
  ...logApiCommands,
  ...modelApiCommands,
  speakApiCommand,
];
