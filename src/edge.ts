// The package root for runtimes without child processes — Cloudflare Workers, browsers, Vercel Edge,
// Deno, Bun (the `workerd`, `worker`, `browser`, `edge-light`, `deno`, `bun` and `default` export
// conditions): the same API as src/index.ts, with the JavaScript engine only. A Python run here is a
// failure result saying why, not a bundler error. Pass `javascript.wasmModule` where the runtime
// refuses to compile WebAssembly at run time (Workers, Vercel Edge).

import { EDGE_ENGINES } from "./engines/registry.edge.ts";
import type { SandboxOptions } from "./options/index.ts";
import { openSandbox, runOnce, type Sandbox } from "./sandbox.ts";
import type { RunRequest, RunResult } from "./core/types.ts";

/** Creates a sandbox that runs JavaScript and TypeScript (Python runs answer with an error result). */
export function createSandbox(options?: SandboxOptions): Promise<Sandbox> {
  return openSandbox(EDGE_ENGINES, options);
}

/** One-shot: create a sandbox, run one request, close it. */
export function run(request: RunRequest, options?: SandboxOptions): Promise<RunResult> {
  return runOnce(EDGE_ENGINES, request, options);
}

export * from "./public.ts";
