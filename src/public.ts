// What both package roots (src/index.ts for Node, src/edge.ts for Workers, browsers, edge runtimes,
// Deno and Bun) export besides their own createSandbox and run: one list, so the two cannot drift.

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
  IntegrityEvent,
  LimitEvent,
  PackagesMissingEvent,
  RestartEvent,
  SandboxEvent,
  SandboxEventListener,
} from "./events.ts";
export type { NetworkAllowEntry } from "./network/allowlist.ts";
export type { Resolver } from "./network/policy.ts";
