// The engines of the edge entry (Workers, browsers, Vercel Edge, Deno, Bun): JavaScript only. Python
// runs in child processes behind a jail, which none of these runtimes can provide.
import { unavailable, type EngineRegistry } from "./registry.ts";

const WHY =
  "Python runs in a child process behind a jail, which only the Node.js build of wasmcell can start " +
  "(this is the build for Workers, browsers, edge runtimes, Deno and Bun); JavaScript and TypeScript run here";

export const EDGE_ENGINES: EngineRegistry = {
  // In-process: these runtimes have no worker threads the bundle may use (each import() here is
  // followed by bundlers, so the thread pool's Node-only module is never named in this file).
  quickjs: () => import("./quickjs/in-process.ts"),
  pyodide: unavailable("pyodide", WHY),
  native: unavailable("native", WHY),
};
