// The one options object, its documented defaults, and the validation that turns bad input into an
// error naming the field. Each concern lives in its own room under options/ with its interface, its
// defaults and its schema side by side; this file is the one place the rest of the code imports them
// from. Each option field names its default with `@defaultValue`, and docs/options.md's tables are
// checked against these constants by a test. The tool adapters' defaults live with the adapters
// (adapters/tools/defaults.ts, adapters/mcp/defaults.ts).

export { DEFAULT_LIMITS, QUICKJS_MAX_MEMORY_MB } from "./limits.ts";
export { DEFAULT_SEAL, RESOLVED_DEFAULT_SEAL, type ResolvedSeal, type SealOptions } from "./seal.ts";
export { DEFAULT_PYTHON, type PythonOptions } from "./python.ts";
export {
  DEFAULT_JAVASCRIPT,
  isWasmModule,
  MAX_RUNS_PER_WORKER,
  MAX_WORKERS_PER_CORE,
  type JavaScriptOptions,
} from "./javascript.ts";
export { DEFAULT_SESSIONS, type SessionsOptions } from "./sessions.ts";
export { DEFAULT_NETWORK, type NetworkOptions } from "./network.ts";
export { resolveOptions, type ResolvedOptions, type SandboxOptions } from "./resolve.ts";
export { resolveRequest, type ResolvedRequest } from "./request.ts";
export { makeOffer, requestWithin, type AskedRequest, type Offer, type OfferSettings } from "./ceilings.ts";
export { checkRelativePath, normalizePath } from "../core/paths.ts";
