import { expect } from "chai";
import { ConfigError, loadConfig } from "../../platform/config/config.js";

/** The problems loadConfig reports for an environment (none: it loaded). */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}
