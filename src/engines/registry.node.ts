// The engines of the Node entry: JavaScript in-process, Python in sidecars and jails (child processes).
import { loadQuickJS, type EngineRegistry } from "./registry.ts";

export const NODE_ENGINES: EngineRegistry = {
  quickjs: loadQuickJS,
  pyodide: () => import("./pyodide/index.ts"),
  native: () => import("./native/index.ts"),
};
