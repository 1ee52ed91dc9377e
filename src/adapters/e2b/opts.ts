// The options of `Sandbox.create` and `runCode`: E2B's, each either mapped onto wasmcell's, ignored
// (it only configures the connection to E2B's service) or refused with a NotSupportedError that says
// why, plus a few of wasmcell's own. Checked once here, so a misspelt or unsupported option fails at
// the call instead of being silently dropped.

import { InvalidOptionError, NotSupportedError } from "../../core/errors.ts";
import { LANGUAGES, PYTHON_ENGINES, type Language, type Limits, type PythonEngine } from "../../core/types.ts";
import type { SandboxOptions } from "../../options/index.ts";
import type { Sandbox as WasmcellSandbox } from "../../sandbox.ts";
import type { ExecutionError, OutputMessage, Result } from "./messaging.ts";

/** A context: one stateful interpreter (E2B's `Context`). */
export interface Context {
  id: string;
  language: string;
  cwd: string;
}

/** `Sandbox.create(opts)`. */
export interface CreateOpts {
  // E2B's options that mean something here.
  /** Kill the sandbox this long after it is created (`setTimeout` moves it). Default: never. */
  timeoutMs?: number;
  /** Kept, and returned by `getInfo()`. */
  metadata?: Record<string, string>;
  /** Environment variables: refused unless empty (runs here have no environment to set). */
  envs?: Record<string, string>;
  /** `false` or absent: runs have no network (wasmcell's default). `true` is refused: grant hosts with `sandboxOptions.network`. */
  allowInternetAccess?: boolean;
  // E2B's connection options: accepted and ignored (there is no service to reach).
  apiKey?: string;
  accessToken?: string;
  domain?: string;
  debug?: boolean;
  requestTimeoutMs?: number;
  logger?: unknown;
  headers?: Record<string, string>;
  secure?: boolean;

  // wasmcell's own.
  /** A wasmcell sandbox to run in (the application's; `kill()` leaves it open). Default: a new one. */
  sandbox?: WasmcellSandbox;
  /** Options of the wasmcell sandbox this creates (not with `sandbox`). Default: wasmcell's defaults. */
  sandboxOptions?: SandboxOptions;
  /**
   * Python's engine. `auto` (default): native where its sessions can run here, else Pyodide. `pyodide`
   * or `native`: that one, or an error when it cannot keep a session here.
   */
  pythonEngine?: "auto" | PythonEngine;
  /** Limits of every run (wasmcell's `Limits`); `timeoutMs` defaults to E2B's 60000, the rest to the sandbox's. */
  limits?: Partial<Limits>;
  /** Cap on the sandbox's files and directories together. @defaultValue 1000 */
  maxWorkspaceEntries?: number;
}

/** `runCode(code, opts)`. */
export interface RunCodeOpts {
  /** `python` (default), `javascript` / `js`, `typescript` / `ts`. Not with `context`. */
  language?: string;
  /** The context to run in (from `createCodeContext`). Not with `language`. */
  context?: Context;
  onStdout?: (output: OutputMessage) => unknown;
  onStderr?: (output: OutputMessage) => unknown;
  onResult?: (result: Result) => unknown;
  onError?: (error: ExecutionError) => unknown;
  /** Refused unless empty: runs here have no environment to set. */
  envs?: Record<string, string>;
  /** This run's deadline (wasmcell's `limits.timeoutMs`); a positive number of milliseconds. */
  timeoutMs?: number;
  /** Ignored: there is no request to a service. */
  requestTimeoutMs?: number;
  /** wasmcell's: aborting it ends the run at once (`execution.error.kind` is `aborted`). */
  signal?: AbortSignal;
}

const CREATE_KEYS = new Set<string>([
  "timeoutMs",
  "metadata",
  "envs",
  "allowInternetAccess",
  "apiKey",
  "accessToken",
  "domain",
  "debug",
  "requestTimeoutMs",
  "logger",
  "headers",
  "secure",
  "sandbox",
  "sandboxOptions",
  "pythonEngine",
  "limits",
  "maxWorkspaceEntries",
]);
/** E2B options for features a local sandbox does not have. */
const CREATE_REFUSED: Record<string, string> = {
  autoPause: "a wasmcell/e2b sandbox cannot be paused: it lives in this process",
  network:
    "E2B's network rules do not map; grant hosts with sandboxOptions.network (an allowlist: every host is refused unless named)",
  mcp: "there is no MCP gateway inside the sandbox; wasmcell's own MCP server is `wasmcell mcp`",
  lifecycle: "a wasmcell/e2b sandbox cannot be paused or resumed: it lives in this process (kill() ends it)",
  template: "there are no sandbox templates",
};

const RUN_KEYS = new Set<string>([
  "language",
  "context",
  "onStdout",
  "onStderr",
  "onResult",
  "onError",
  "envs",
  "timeoutMs",
  "requestTimeoutMs",
  "signal",
]);

const noEnvs = (field: string): NotSupportedError =>
  new NotSupportedError(
    field,
    "runs have no environment variables to set (nothing of the host's environment reaches guest code); pass values in the code or as files",
  );

export function checkCreateOpts(opts: unknown): CreateOpts {
  if (typeof opts !== "object" || opts === null || Array.isArray(opts))
    throw new InvalidOptionError("Sandbox.create", "takes an options object");
  for (const key of Object.keys(opts)) {
    const refused = CREATE_REFUSED[key];
    if (refused !== undefined && (opts as Record<string, unknown>)[key] !== undefined)
      throw new NotSupportedError(`Sandbox.create's ${key}`, refused);
    if (refused === undefined && !CREATE_KEYS.has(key))
      throw new InvalidOptionError(`Sandbox.create.${key}`, "is not an option of wasmcell/e2b's Sandbox.create");
  }
  const o = opts as CreateOpts;
  if (o.envs !== undefined && Object.keys(o.envs).length > 0) throw noEnvs("Sandbox.create's envs");
  if (o.allowInternetAccess === true)
    throw new NotSupportedError(
      "allowInternetAccess: true",
      "runs have no network unless granted, and a grant names its hosts: pass sandboxOptions.network (an allowlist)",
    );
  if (o.sandbox !== undefined && o.sandboxOptions !== undefined)
    throw new InvalidOptionError("sandboxOptions", "configures a sandbox this creates: not with `sandbox`");
  if (o.pythonEngine !== undefined && o.pythonEngine !== "auto" && !PYTHON_ENGINES.includes(o.pythonEngine))
    throw new InvalidOptionError("pythonEngine", `must be "auto", ${PYTHON_ENGINES.map((e) => `"${e}"`).join(" or ")}`);
  if (o.timeoutMs !== undefined && (!Number.isSafeInteger(o.timeoutMs) || o.timeoutMs <= 0))
    throw new InvalidOptionError("timeoutMs", "must be a positive integer of milliseconds");
  if (
    o.maxWorkspaceEntries !== undefined &&
    (!Number.isSafeInteger(o.maxWorkspaceEntries) || o.maxWorkspaceEntries < 0)
  )
    throw new InvalidOptionError("maxWorkspaceEntries", "must be a non-negative integer");
  if (o.metadata !== undefined && (typeof o.metadata !== "object" || o.metadata === null))
    throw new InvalidOptionError("metadata", "must be an object of strings");
  if (o.limits !== undefined && (typeof o.limits !== "object" || o.limits === null))
    throw new InvalidOptionError("limits", "must be an object of wasmcell limits");
  return o;
}

export function checkRunCodeOpts(opts: unknown): asserts opts is RunCodeOpts {
  if (typeof opts !== "object" || opts === null || Array.isArray(opts))
    throw new InvalidOptionError("runCode", "takes the code and an options object");
  for (const key of Object.keys(opts))
    if (!RUN_KEYS.has(key))
      throw new InvalidOptionError(`runCode.${key}`, "is not an option of wasmcell/e2b's runCode");
  const o = opts as RunCodeOpts;
  if (o.context !== undefined && o.language !== undefined)
    throw new InvalidOptionError("runCode", "give a context or a language, not both (a context has its language)");
  for (const key of ["onStdout", "onStderr", "onResult", "onError"] as const)
    if (o[key] !== undefined && typeof o[key] !== "function")
      throw new InvalidOptionError(`runCode.${key}`, "must be a function");
  if (o.envs !== undefined && Object.keys(o.envs).length > 0) throw noEnvs("runCode's envs");
  if (o.timeoutMs !== undefined && (typeof o.timeoutMs !== "number" || !(o.timeoutMs > 0)))
    throw new InvalidOptionError(
      "runCode.timeoutMs",
      "must be a positive number of milliseconds (every run has a deadline here: 0 for none is not supported)",
    );
}

/** The wasmcell language of E2B's language names; R, Java and Bash are refused. */
export function languageOf(language: unknown): Language {
  if (language === undefined) return "python";
  if (typeof language !== "string") throw new InvalidOptionError("language", "must be a string");
  const name = language.toLowerCase();
  const alias: Record<string, Language> = { js: "javascript", ts: "typescript", py: "python", python3: "python" };
  const found = alias[name] ?? (LANGUAGES as readonly string[]).find((l) => l === name);
  if (found) return found as Language;
  if (["r", "java", "bash", "sh", "deno"].includes(name))
    throw new NotSupportedError(
      `language ${JSON.stringify(language)}`,
      "wasmcell runs Python, JavaScript and TypeScript",
    );
  throw new InvalidOptionError(
    "language",
    `must be python, javascript (js) or typescript (ts), not ${JSON.stringify(language)}`,
  );
}

/**
 * The code of a Python cell as IPython runs it: when every line is indented by the same leading
 * whitespace (code written inside a template string, as E2B's own examples are), that indentation
 * is removed, as IPython's input transformer removes it. Lines are kept, so a traceback's line numbers
 * are the cell's. JavaScript and TypeScript are left as they are (indentation means nothing there).
 */
export function cellCode(code: string, language: Language): string {
  if (language !== "python") return code;
  const lines = code.split("\n");
  const first = lines.find((l) => l.trim() !== "");
  const indent = first?.match(/^[ \t]+/)?.[0];
  if (indent === undefined || !lines.every((l) => l.trim() === "" || l.startsWith(indent))) return code;
  return lines.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join("\n");
}
