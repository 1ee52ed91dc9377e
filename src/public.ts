// What both package roots (src/index.ts for Node, src/edge.ts for Workers, browsers, edge runtimes,
// Deno and Bun) export besides their own createSandbox and run: one list, so the two cannot drift.

export { Sandbox, Session } from "./sandbox.ts";
export {
  DEFAULT_LIMITS,
  DEFAULT_NETWORK,
  DEFAULT_PYTHON,
  DEFAULT_SEAL,
  DEFAULT_SESSIONS,
  type JavaScriptOptions,
  type NetworkOptions,
  type PythonOptions,
  type SandboxOptions,
  type SealOptions,
  type SessionsOptions,
} from "./options/index.ts";
export * from "./core/types.ts";
export * from "./core/errors.ts";
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
  SessionEvent,
} from "./core/events.ts";
export type { SessionStore, SessionLock } from "./stores/store.ts";
export type { NetworkAllowEntry } from "./network/allowlist.ts";
export type { Resolver } from "./network/policy.ts";
