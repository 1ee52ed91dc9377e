// The shapes every engine speaks: one request, one result, one error taxonomy.
// Nothing here imports Node: the package root must load on edge runtimes too.

/** The languages a request may name. TypeScript is type-stripped and run by the JavaScript engine. */
export const LANGUAGES = ["javascript", "typescript", "python"] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * The engines that can answer a request.
 * - `quickjs`: QuickJS compiled to WebAssembly, in a pool of worker threads in the host process (or on
 *   the caller's thread, `javascript.isolation: "in-process"`) (JavaScript, TypeScript).
 * - `pyodide`: CPython compiled to WebAssembly, in a pool of sealed sidecar processes (Python).
 * - `native`: the host's `python3` (numpy, pandas, matplotlib) inside the same jail (Python, Linux only).
 */
export const ENGINES = ["quickjs", "pyodide", "native"] as const;
export type EngineName = (typeof ENGINES)[number];

/** What the rest of the house needs to know about an engine, without loading it. */
export interface EngineInfo {
  /** The languages it runs. */
  readonly languages: readonly Language[];
  /**
   * Where guest code runs: `thread` (a worker thread of the host, or the caller's thread on runtimes
   * without threads) or `process` (a sealed child process, jailed: a run past its deadline ends that
   * process, which is then replaced, and the jail binds the package's runtime files).
   */
  readonly runsIn: "thread" | "process";
  /** Sessions keep state across runs (`sandbox.session`). */
  readonly sessions: boolean;
  /** A session's state can leave the engine as bytes: snapshot, resume, fork, eviction. */
  readonly snapshots: boolean;
  /** Runs on the edge build (Workers, browsers, Deno, Bun). */
  readonly edge: boolean;
  /** Enforces `limits.maxStackKb` (its `stack` verdict is that limit firing). */
  readonly stackCap: boolean;
}

/**
 * The engines' facts, in one table: which engine runs which language, which keep and move state.
 * Everything that would otherwise type an engine's name (the request's allowed engines, resume's
 * choice of engine, the CLI's `--engine`, the tools' schemas, the event rules) reads it.
 */
export const ENGINE_INFO = {
  quickjs: {
    languages: ["javascript", "typescript"],
    runsIn: "thread",
    sessions: true,
    snapshots: true,
    edge: true,
    stackCap: true,
  },
  pyodide: { languages: ["python"], runsIn: "process", sessions: true, snapshots: true, edge: false, stackCap: false },
  native: { languages: ["python"], runsIn: "process", sessions: true, snapshots: false, edge: false, stackCap: false },
} as const satisfies Record<EngineName, EngineInfo>;

/** The engines that run `L`. */
export type EngineFor<L extends Language> = {
  [E in EngineName]: L extends (typeof ENGINE_INFO)[E]["languages"][number] ? E : never;
}[EngineName];
/** The engines that run Python (`python.engine`, the tools' `pythonEngine`, the CLI's `--engine`). */
export type PythonEngine = EngineFor<"python">;

/** The engines that run `language`, in ENGINES order (the first is the default but for `python.engine`). */
export function enginesFor<L extends Language>(language: L): readonly EngineFor<L>[] {
  return ENGINES.filter((e) => (ENGINE_INFO[e].languages as readonly Language[]).includes(language)) as EngineFor<L>[];
}

/** The Python engines, as a list (schemas and flags take it). */
export const PYTHON_ENGINES = enginesFor("python") as readonly [PythonEngine, ...PythonEngine[]];

/**
 * Per-run limits. Sandbox-wide defaults come from `SandboxOptions.limits` (else `DEFAULT_LIMITS` in
 * src/options/index.ts, the values below); a request may override them field by field. A request from
 * someone other than the application (a queue job, a model's tool call) may only lower them
 * (src/options/ceilings.ts).
 */
export interface Limits {
  /**
   * Wall-clock deadline for the whole run: code, promise jobs, timers, host calls.
   * @defaultValue 5000
   */
  timeoutMs: number;
  /**
   * Cap on the guest's heap (QuickJS runtime, or the sidecar's WASM memory / process). 1 to 4096; a
   * JavaScript run gets at most 2048 (QUICKJS_MAX_MEMORY_MB: all its WebAssembly memory can hold).
   * @defaultValue 128
   */
  memoryMb: number;
  /**
   * Cap on stdout + stderr together, in UTF-8 bytes. Past it, output is cut and marked.
   * @defaultValue 65536
   */
  maxOutputBytes: number;
  /**
   * Cap on the serialised result value, in UTF-8 bytes.
   * @defaultValue 1048576
   */
  maxResultBytes: number;
  /**
   * Cap on the guest's call stack, in KiB (JavaScript engine).
   * @defaultValue 256
   */
  maxStackKb: number;
  /**
   * Timers (`setTimeout`/`setInterval`) a run may create.
   * @defaultValue 1000
   */
  maxTimers: number;
  /**
   * Host-function calls a run may make.
   * @defaultValue 256
   */
  maxHostCalls: number;
  /**
   * Files a run may write and get back.
   * @defaultValue 32
   */
  maxFiles: number;
  /**
   * Size of the files a run may write and get back, all together, in bytes (also caps input files).
   * @defaultValue 16777216
   */
  maxFileBytes: number;
  /**
   * Size of the code itself, in UTF-8 bytes.
   * @defaultValue 1048576
   */
  maxCodeBytes: number;
  /**
   * Display items a run may show (`display()`, figures, the last expression's rich repr): `results`.
   * @defaultValue 64
   */
  maxResults: number;
  /**
   * Size of one display item, in bytes: the UTF-8 bytes of its text and base64 values and of its
   * `application/json` value as JSON, all its MIME types together.
   * @defaultValue 4194304
   */
  maxDisplayItemBytes: number;
  /**
   * Size of all of a run's display items together, counted as `maxDisplayItemBytes` counts one.
   * @defaultValue 16777216
   */
  maxDisplayBytes: number;
}

/** Every limit's name, once (trace attributes and the queue's wire schema take their enums from it). */
export const LIMIT_NAMES = [
  "timeoutMs",
  "memoryMb",
  "maxOutputBytes",
  "maxResultBytes",
  "maxStackKb",
  "maxTimers",
  "maxHostCalls",
  "maxFiles",
  "maxFileBytes",
  "maxCodeBytes",
  "maxResults",
  "maxDisplayItemBytes",
  "maxDisplayBytes",
] as const satisfies readonly (keyof Limits)[];
type UnlistedLimit = Exclude<keyof Limits, (typeof LIMIT_NAMES)[number]>;
// A limit added to Limits and not to LIMIT_NAMES fails to compile here.
const _everyLimitListed: [UnlistedLimit] extends [never] ? true : UnlistedLimit = true;
void _everyLimitListed;

/**
 * A function the host exposes to guest JavaScript under its name. Off by default: the guest sees only
 * the functions the caller names. Arguments arrive as plain data (decoded by the host from JSON the
 * guest produced, never guest objects); the return value must be JSON-serialisable and goes back to the
 * guest as data; a throw becomes an exception in the guest. Each call counts against
 * `limits.maxHostCalls` and runs inside the run's deadline; `context.signal` aborts when the run ends.
 */
export type HostFunction = (args: unknown[], context: HostCallContext) => unknown;
export interface HostCallContext {
  /** Aborts when the run ends (deadline, abort, or completion) so the host can stop its work. */
  signal: AbortSignal;
}

/** Input file contents: bytes, or a string stored as UTF-8. Paths are relative to the working directory. */
export type FileInput = Uint8Array | string;

export interface RunRequest {
  language: Language;
  code: string;
  /** Which engine runs the code; defaults from the options (`python.engine` for Python). */
  engine?: EngineName;
  /** Files placed in the working directory before the run (keys are relative paths). */
  files?: Record<string, FileInput>;
  /** Per-run overrides of the sandbox's default limits. */
  limits?: Partial<Limits>;
  /** Host functions for this run only (JavaScript), added to the sandbox's `javascript.hostFunctions`. */
  hostFunctions?: Record<string, HostFunction>;
  /** Receives stdout/stderr chunks while the run is going (after the caps are applied). */
  onOutput?: (chunk: OutputChunk) => void;
  /** Receives each display item as the guest shows it (after the caps are applied), in order. */
  onResult?: (item: DisplayItem) => void;
  /** Aborting it ends the run at once with error kind `aborted`. */
  signal?: AbortSignal;
  /**
   * This run's network: `false` for none, or a narrower allowlist / lower caps than the sandbox's
   * `network` (a run may narrow, never widen; the injected headers stay the sandbox's).
   */
  network?: false | RunNetworkOptions;
  /**
   * The caller's span, as a W3C `traceparent` header value (`00-<trace id>-<span id>-<flags>`): the run's
   * OpenTelemetry spans go under it (docs/traces.md). Without it they go under the caller's active
   * context. A string that is not a valid `traceparent` is ignored (the W3C rule: the run starts from
   * the caller's context instead, and its span says `wasmcell.traceparent.ignored`); one that is not a
   * string, or longer than 512 characters, is an InvalidOptionError. `tracestate` is not carried.
   */
  traceparent?: string;
}

/**
 * The network's caps, counted per run (the sandbox's `network` sets them; a request's may lower them).
 * Defaults: `DEFAULT_NETWORK` in src/options/network.ts.
 */
export interface NetworkCaps {
  /**
   * Requests a run may make (each redirect hop counts).
   * @defaultValue 32
   */
  maxRequests?: number;
  /**
   * Bytes of one request body.
   * @defaultValue 1048576 (1 MiB)
   */
  maxRequestBytes?: number;
  /**
   * Bytes of one response body.
   * @defaultValue 8388608 (8 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Response bytes of all the run's requests together.
   * @defaultValue 33554432 (32 MiB)
   */
  maxTotalBytes?: number;
  /**
   * Time one request (with its redirects and body) may take; never past the run's deadline.
   * @defaultValue 30000
   */
  timeoutMs?: number;
  /**
   * Redirects followed for one request, each checked like a new request.
   * @defaultValue 5
   */
  maxRedirects?: number;
  /**
   * HTTP methods allowed (`["GET"]`, say).
   * @defaultValue any method
   */
  methods?: string[];
}

/** What a run may set of the sandbox's network: a subset of its allowlist, lower caps, fewer methods. */
export interface RunNetworkOptions extends NetworkCaps {
  allow?: Array<string | { host: string }>;
}

export interface OutputChunk {
  stream: "stdout" | "stderr";
  text: string;
}

/**
 * What went wrong in the guest. Guest failures are *returned*, never thrown.
 * - `syntax`: the code does not parse.
 * - `runtime`: an uncaught exception.
 * - `timeout`: the deadline passed.
 * - `memory`: the memory cap was hit.
 * - `stack`: the call stack overflowed.
 * - `output_limit`: the result value or the files were over their caps.
 * - `denied`: the code tried something the sandbox does not grant.
 * - `crashed`: the engine died under the code (a WASM abort, a killed sidecar).
 * - `aborted`: the caller's `signal` aborted the run.
 */
export const ERROR_KINDS = [
  "syntax",
  "runtime",
  "timeout",
  "memory",
  "stack",
  "output_limit",
  "denied",
  "crashed",
  "aborted",
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export interface GuestError {
  kind: ErrorKind;
  /** The exception's name (`TypeError`, `ZeroDivisionError`, `InternalError`, …). */
  name: string;
  /** A message a model can act on. */
  message: string;
  /** Stack or traceback, with frames in the user's code only. */
  stack?: string;
  /** 1-based line in the user's code, where known. */
  line?: number;
  /** 1-based column in the user's code, where known. */
  column?: number;
  /**
   * Which of the run's limits the host saw fire, for `timeout` (`timeoutMs`), `memory` (`memoryMb`),
   * `stack` (`maxStackKb`, on an engine that enforces it) and `output_limit` (the result, file or
   * display cap that was passed). Absent for every other failure. The host's verdict, like the kind:
   * never taken from what the guest says about itself.
   */
  limit?: keyof Limits;
}

/** The limits an `output_limit` failure can name: what a run returns, not what it spends. */
export const OUTPUT_LIMITS = [
  "maxResultBytes",
  "maxFiles",
  "maxFileBytes",
  "maxResults",
  "maxDisplayItemBytes",
  "maxDisplayBytes",
] as const satisfies readonly (keyof Limits)[];
export type OutputLimit = (typeof OUTPUT_LIMITS)[number];

/**
 * The limit a failure means, given the engine that ran it: the kinds that are one limit firing name
 * it; `output_limit` names the one its producer (the host's check) saw; a `stack` verdict of an engine
 * without a stack cap (Pyodide's WebAssembly stack) names none.
 */
export function limitOf(error: GuestError, engine: EngineName): keyof Limits | undefined {
  switch (error.kind) {
    case "timeout":
      return "timeoutMs";
    case "memory":
      return "memoryMb";
    case "stack":
      return ENGINE_INFO[engine].stackCap ? "maxStackKb" : undefined;
    case "output_limit":
      return error.limit !== undefined && (OUTPUT_LIMITS as readonly string[]).includes(error.limit)
        ? error.limit
        : undefined;
    default:
      return undefined;
  }
}

export interface RunStats {
  engine: EngineName;
  /** Wall time from the engine taking the run to its result, including queueing for a pooled engine. */
  wallMs: number;
  /** Bytes of stdout + stderr the guest tried to write (before the cap). */
  outputBytes: number;
  /** Peak memory the guest used, where the engine can tell. */
  peakMemoryBytes?: number;
}

export interface OutputFile {
  /** Path relative to the working directory. */
  path: string;
  bytes: Uint8Array;
  /** A best guess from the file name (`image/png`, `text/csv`, …). */
  mimeType: string;
}

/**
 * One MIME bundle, as Jupyter's display data is: `text/plain` is always there; the other keys come
 * from an allowlist (`text/html`, `text/markdown`, `image/png`, `image/svg+xml`, `application/json`,
 * …). Text types hold strings, binary types (`image/png`, `image/jpeg`, `application/pdf`) hold
 * validated base64 strings, `application/json` holds plain data.
 */
export type DisplayBundle = { "text/plain": string } & Readonly<Record<string, unknown>>;

/** Something the code showed: `display(x)`, a figure, or the last expression's rich repr. */
export interface DisplayItem {
  data: DisplayBundle;
  /** True for the run's main result: the last expression's rich repr (at most one per run). */
  main: boolean;
}

interface RunResultBase {
  language: Language;
  stdout: string;
  stderr: string;
  /** True when stdout/stderr were cut at `maxOutputBytes` (the text also ends with a marker). */
  outputTruncated: boolean;
  /** Files the run wrote in its working directory (new or changed), within the caps. */
  files: OutputFile[];
  /** What the code displayed, in the order shown (charts, tables, rich values), within the caps. */
  results: DisplayItem[];
  stats: RunStats;
}

export interface RunSuccess extends RunResultBase {
  ok: true;
  /**
   * The value of the last expression (script), the default export (module), or Python's last
   * expression. Always plain data rebuilt by the host: JSON types, `undefined`, `NaN`, `±Infinity`,
   * `-0`, `bigint`, `Date`, `Map`, `Set`, typed arrays, `Error`; a cycle is the string `"[Circular]"`.
   * Python values that are not JSON-able come back as their `repr()` string.
   */
  value: unknown;
}

export interface RunFailure extends RunResultBase {
  ok: false;
  error: GuestError;
}

export type RunResult = RunSuccess | RunFailure;

/** `sandbox.resume(bytes, options)`. */
export interface ResumeOptions {
  /**
   * Default `true`: the resumed session draws a new seed for Python's module-level `random`, so two
   * sessions resumed from one snapshot (a template resumed per user) cannot predict each other's draws.
   * `false`: the bytes are this same session carrying on (stored between calls, as the MCP server and
   * the CLI's `--session` do), so a sequence the guest seeded continues. JavaScript's `Math.random` is
   * reseeded on every resume either way: a guest cannot seed it, so no sequence is lost.
   */
  reseed?: boolean;
}

/**
 * A compiled WebAssembly module (`WebAssembly.Module`) or a promise of one, as `javascript.wasmModule`
 * takes it. Typed as `object` so the package's types need no DOM library; checked when the engine starts.
 */
export type WasmModuleSource = object;
