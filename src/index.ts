// The package root for Node.js (the `node` export condition): JavaScript, TypeScript and Python.
// Imports nothing Node-only at load time: engines are loaded when first used. src/edge.ts is the same
// API for runtimes without child processes; both export src/public.ts (test/edge/package.test.ts checks
// that the names match).

import { NODE_ENGINES } from "./engines/registry.node.ts";
import type { SandboxOptions } from "./options/index.ts";
import { openSandbox, runOnce, type Sandbox } from "./sandbox.ts";
import type { RunRequest, RunResult } from "./core/types.ts";

/** Creates a sandbox. With a `python` option, the Python pool starts warming before this resolves. */
export function createSandbox(options?: SandboxOptions): Promise<Sandbox> {
  return openSandbox(NODE_ENGINES, options);
}

/** One-shot: create a sandbox, run one request, close it. */
export function run(request: RunRequest, options?: SandboxOptions): Promise<RunResult> {
  return runOnce(NODE_ENGINES, request, options);
}

export * from "./public.ts";
