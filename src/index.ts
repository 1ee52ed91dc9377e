// The package root. Imports nothing Node-only at load time: engines are loaded when first used.

export { createSandbox, run, Sandbox, Session } from "./sandbox.ts";
export {
  DEFAULT_LIMITS,
  DEFAULT_PYTHON,
  DEFAULT_SEAL,
  type JavaScriptOptions,
  type PythonOptions,
  type SandboxOptions,
  type SealOptions,
} from "./options.ts";
export * from "./types.ts";
export * from "./errors.ts";
