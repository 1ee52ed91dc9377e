// The engines of the edge entry (Workers, browsers, Vercel Edge, Deno, Bun): JavaScript only. Python
// runs in child processes behind a jail, which none of these runtimes can provide.
import { loadQuickJS, unavailable, type EngineRegistry } from "./registry.ts";

const WHY =
  "Python runs in a child process behind a jail, which only the Node.js build of wasmcell can start " +
  "(this is the build for Workers, browsers, edge runtimes, Deno and Bun); JavaScript and TypeScript run here";

export const EDGE_ENGINES: EngineRegistry = {
  quickjs: loadQuickJS,
  pyodide: unavailable("pyodide", WHY),
  native: unavailable("native", WHY),
};
