// The package root. Imports nothing Node-only at load time: engines are loaded when first used.

export { createSandbox, run, Sandbox, Session } from "./sandbox.ts";
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
  LimitEvent,
  RestartEvent,
  SandboxEvent,
  SandboxEventListener,
} from "./events.ts";
export type { NetworkAllowEntry } from "./network/allowlist.ts";
export type { Resolver } from "./network/policy.ts";
