// The engines of the Node entry: JavaScript in worker threads (or in-process), Python in sidecars and
// jails (child processes).
import type { EngineRegistry } from "./registry.ts";

export const NODE_ENGINES: EngineRegistry = {
  // Worker threads by default, or in-process (`javascript.isolation`).
  quickjs: () => import("./quickjs/index.ts"),
  pyodide: () => import("./pyodide/index.ts"),
  native: () => import("./native/index.ts"),
  // Loaded only here, when a sandbox opens with `python.packages` on (a quick look, no hashing).
  pythonPackages: async () => (await import("../library/library.ts")).installedImports(),
  snapshots: () => import("./sessions/snapshot.ts"),
};
