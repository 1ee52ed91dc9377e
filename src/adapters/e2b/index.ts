// `wasmcell/e2b`: `@e2b/code-interpreter`'s client API over local wasmcell sandboxes, so code written
// for E2B runs with only its import changed: `Sandbox.create()`, `runCode` → `Execution`, contexts,
// `files`, `kill()`. What only E2B's remote VMs have throws a NotSupportedError that says so.

import { Sandbox } from "./sandbox.ts";

export { Sandbox, DEFAULT_RUN_TIMEOUT_MS, type SandboxInfo } from "./sandbox.ts";
export { Execution, ExecutionError, OutputMessage, Result, type Logs } from "./messaging.ts";
export type { Context, CreateOpts, RunCodeOpts } from "./opts.ts";
export type { EntryInfo, FileType, Filesystem, WriteData, WriteEntry, WriteInfo } from "./files.ts";
export { NotSupportedError, WorkspaceError, InvalidOptionError, ClosedError } from "../../core/errors.ts";

export default Sandbox;
