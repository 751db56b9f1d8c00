import { ESPEAK_PACKAGE } from "./espeak-wasm.js";

/** RAILGATE_EMBEDDED_ENGINE: "auto" uses eSpeak NG when its package is installed, "off" never. */
export type EmbeddedEngineSetting = "auto" | "off";

/**
 * Why the embedded engine cannot run, or undefined when it can. The package is left out of an
 * image built with WITH_ESPEAK=false (it is GPL-3.0); resolving it, not loading it, tells.
 */
export function embeddedEngineUnavailable(setting: EmbeddedEngineSetting): string | undefined {
  if (setting === "off") return "RAILGATE_EMBEDDED_ENGINE=off";
  try {
    import.meta.resolve(ESPEAK_PACKAGE);
    return undefined;
  } catch {
    return `${ESPEAK_PACKAGE} is not installed (an image built with WITH_ESPEAK=false)`;
  }
}
