// The package root for Node.js (the `node` export condition): JavaScript, TypeScript and Python.
// Imports nothing Node-only at load time: engines are loaded when first used. src/edge.ts is the same
// API for runtimes without child processes (test/edge/package.test.ts checks both export the same names).

import { NODE_ENGINES } from "./engines/registry.node.ts";
import type { SandboxOptions } from "./options.ts";
import { openSandbox, runOnce, type Sandbox } from "./sandbox.ts";
import type { RunRequest, RunResult } from "./types.ts";

/** Creates a sandbox. With a `python` option, the Python pool starts warming before this resolves. */
export function createSandbox(options?: SandboxOptions): Promise<Sandbox> {
  return openSandbox(NODE_ENGINES, options);
}

/** One-shot: create a sandbox, run one request, close it. */
export function run(request: RunRequest, options?: SandboxOptions): Promise<RunResult> {
  return runOnce(NODE_ENGINES, request, options);
}

export { Sandbox, Session } from "./sandbox.ts";
export {
  DEFAULT_LIMITS,
  DEFAULT_NETWORK,
  DEFAULT_PYTHON,
  DEFAULT_SEAL,
  type JavaScriptOptions,
  type NetworkOptions,
  type PythonOptions,
  type SandboxOptions,
  type SealOptions,
} from "./options.ts";
export * from "./types.ts";
export * from "./errors.ts";
export type {
  DenialEvent,
  EgressEvent,
  EngineBuildingEvent,
  EngineBuiltEvent,
  LimitEvent,
  PackagesMissingEvent,
  RestartEvent,
  SandboxEvent,
  SandboxEventListener,
} from "./events.ts";
export type { NetworkAllowEntry } from "./network/allowlist.ts";
export type { Resolver } from "./network/policy.ts";
