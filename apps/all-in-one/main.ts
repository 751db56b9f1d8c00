/** `npm start`: every service and the gateway in one process (see apps/all-in-one/system.ts). */
import { runUntilSignal } from "../../platform/lifecycle.js";
import { startSystem } from "./system.js";

await runUntilSignal("railgate", startSystem);
