/** `npm start`: every service and the gateway in one process (see services/system.ts). */
import { runUntilSignal } from "./common/lifecycle.js";
import { startSystem } from "./system.js";

await runUntilSignal("railgate", startSystem);
