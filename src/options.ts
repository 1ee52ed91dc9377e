// The one options object, its documented defaults, and the validation that turns bad input into an
// error naming the field. Every public default wasmcell has is exported from this file (limits, Python
// pool, seal, the tool adapters' output format and code mode); each option field names its default with
// `@defaultValue`, and README's Options section is checked against these constants by a test.

import { z } from "zod";
import { InvalidOptionError } from "./errors.ts";
import {
  ENGINES,
  LANGUAGES,
  type EngineName,
  type HostFunction,
  type Language,
  type Limits,
  type RunRequest,
  type WasmModuleSource,
} from "./types.ts";
import { eventSink, type EventInput, type SandboxEventListener } from "./events.ts";
import { AllowEntryError, parseAllowEntry, type AllowEntryInput, type AllowRule } from "./network/allowlist.ts";
import { narrowPolicy, type NetworkPolicy, type Resolver } from "./network/policy.ts";

/** Which layers of the seal to set up around sidecars and the native tier. Each defaults to on. */
export interface SealOptions {
  /**
   * bubblewrap namespaces (user, pid, net, ipc, uts, mount), read-only binds, empty environment.
   * @defaultValue true
   */
  bubblewrap?: boolean;
  /**
   * seccomp-bpf syscall allowlist: `true` answers an unlisted syscall with EPERM; `"kill"` kills the
   * process instead (a test mode); `false` installs no filter.
   * @defaultValue true
   */
  seccomp?: boolean | "kill";
  /**
   * Node's permission model inside the Pyodide sidecar.
   * @defaultValue true
   */
  nodePermissions?: boolean;
  /**
   * When the host runs as root, drop the sidecar to an unprivileged uid/gid: `true` means 65534/65534.
   * @defaultValue true
   */
  dropPrivileges?: boolean | { uid: number; gid: number };
}

export interface PythonOptions {
  /**
   * The engine for Python runs that name none.
   * @defaultValue "pyodide"
   */
  engine?: "pyodide" | "native";
  /**
   * Warm Pyodide sidecars kept ready; also the most native-tier runs (one jail each) at once.
   * @defaultValue 2
   */
  pool?: number;
  /**
   * Runs that may wait for a sidecar (or, native tier, for a free run slot) before `run()` throws `QUEUE_FULL`.
   * @defaultValue 64
   */
  maxQueue?: number;
  /**
   * Start the pool when the sandbox is created rather than on the first Python run.
   * @defaultValue `true` when a `python` object is given, `false` when `python` is left out
   */
  prewarm?: boolean;
  /**
   * Start sidecars from a Pyodide memory snapshot (built once per machine, cached) rather than a cold load.
   * @defaultValue true
   */
  snapshot?: boolean;
  /**
   * Mount the package library `wasmcell setup` installed (read-only, on `sys.path` after the standard
   * library; the native tier gets the same files). Without setup, or with `false`: standard library only.
   * @defaultValue true
   */
  packages?: boolean;
}

export interface JavaScriptOptions {
  /**
   * Functions guest JavaScript may call as `await name(...args)`.
   * @defaultValue `{}` (none)
   */
  hostFunctions?: Record<string, HostFunction>;
  /**
   * The compiled QuickJS engine (`import wasmModule from "wasmcell/quickjs.wasm"`), or a promise of
   * one. Cloudflare Workers and Vercel Edge refuse to compile WebAssembly at run time: there, import the
   * module and pass it. Elsewhere the engine loads its own `.wasm` file.
   * @defaultValue undefined (the engine loads its own .wasm file)
   */
  wasmModule?: WasmModuleSource;
  /**
   * Where guest JavaScript runs. `"thread"`: in a pool of worker threads; the host's thread never
   * executes guest code, and a run that overruns its deadline inside a builtin that never polls the
   * interrupt (`indexOf` over a 2^32 array-like) is ended by terminating its worker. `"in-process"`: on
   * the caller's own thread, lowest latency, for runtimes without worker threads; such a builtin holds
   * that thread until it returns.
   * @defaultValue `"thread"` where `node:worker_threads` exists, else `"in-process"`
   */
  isolation?: "thread" | "in-process";
  /**
   * Worker threads in the pool (`isolation: "thread"`); a warm spare is kept beside them.
   * @defaultValue `availableParallelism()` (`navigator.hardwareConcurrency`), at least 1
   */
  workers?: number;
  /**
   * The most worker threads the pool grows to (`isolation: "thread"`). When every worker with room is
   * held by one long synchronous stretch (a CPU-bound run), the pool starts an overflow worker rather
   * than queue other runs behind it, so the OS time-slices them beside the spinning one; overflow
   * workers retire after 30 s idle. Each warm worker holds about 30 MB; at least `workers`.
   * @defaultValue `MAX_WORKERS_PER_CORE` (4) × `availableParallelism()`, at least `workers`
   */
  maxWorkers?: number;
  /**
   * Runs one worker thread is given at once (`isolation: "thread"`), 1 to 8. Runs on one thread take
   * turns: a run's deadline counts from when its worker takes it, so runs queued on a thread behind a
   * CPU-bound one wait out that one's stretch on their own clock. 1 gives every run a thread of its own
   * (the rest wait on the host, their clock not started, and the pool grows for them while threads are
   * stalled): what a server facing untrusted CPU loops wants (`wasmcell mcp` sets it). 8 packs runs that
   * mostly await host functions onto few threads.
   * @defaultValue 8
   */
  runsPerWorker?: number;
  /**
   * Whether a worker thread held by one synchronous stretch of guest code for more than 2 ms lowers its
   * own priority (nice 19) until the stretch ends (`isolation: "thread"`, Linux). With more CPU loops
   * than cores, the host's thread and short runs then get the CPU first instead of an equal share; a
   * loop alone on the machine runs as fast, and at its deadline its thread is put back so it stops at
   * once. Putting a thread back needs CAP_SYS_NICE or a nice limit of 20 (`ulimit -e 20`): `"auto"`
   * demotes only where the process has one (checked once, by a throwaway thread); `true` without one
   * is an `InvalidOptionError` when the pool starts; `false` never demotes.
   * @defaultValue `"auto"`
   */
  demoteCpuBound?: "auto" | boolean;
  /**
   * Runs that may wait for a free slot (each worker, or the in-process engine, runs up to 8 at once)
   * before `run()` throws `QueueFullError`.
   * @defaultValue 256
   */
  maxQueue?: number;
}

/**
 * Network access, enforced by the host for every tier. Off unless given: no option, or `false`, means
 * the guest has no network at all. Caps count per run; a request's `network` may lower them.
 */
export interface NetworkOptions {
  /**
   * Where the guest may connect: `"api.example.com"`, `"*.example.com"` (subdomains only),
   * `"host:8443"`, or an IP literal `"127.0.0.1:8080"` (the only way to reach a non-public address).
   * Without a port an entry allows the scheme's default port only (80 for http, 443 for https).
   * The object form adds `headers` the host injects (the guest never sees them).
   */
  allow: AllowEntryInput[];
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
  /**
   * Resolves a host name to its addresses. The host checks every address it returns.
   * @defaultValue the operating system's resolver
   */
  resolve?: Resolver;
}

export interface SandboxOptions {
  /**
   * Default limits for every run; a request's `limits` override them field by field.
   * @defaultValue {@link DEFAULT_LIMITS}
   */
  limits?: Partial<Limits>;
  /** @defaultValue no host functions; {@link DEFAULT_JAVASCRIPT}; the thread pool sized to the machine */
  javascript?: JavaScriptOptions;
  /** @defaultValue {@link DEFAULT_PYTHON}; the pool starts on the first Python run */
  python?: PythonOptions;
  /** @defaultValue {@link DEFAULT_SEAL}: every layer on */
  seal?: SealOptions;
  /**
   * Network access for guest code. See NetworkOptions.
   * @defaultValue false (no network)
   */
  network?: NetworkOptions | false;
  /**
   * Receives what the sandbox did that a caller or a security reviewer needs to see, as plain data
   * (src/events.ts): egress decisions, limits that fired, denials, engine restarts, an engine being built
   * on first use and how long that takes, the package library missing. Called synchronously; a
   * listener that throws is ignored.
   * @defaultValue none
   */
  onEvent?: SandboxEventListener;
}

export const DEFAULT_NETWORK = Object.freeze({
  maxRequests: 32,
  maxRequestBytes: 1024 * 1024,
  maxResponseBytes: 8 * 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
});

/** The defaults, in one place. README's "Options" section lists the same values (test/options.test.ts checks it). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: 5_000,
  memoryMb: 128,
  maxOutputBytes: 64 * 1024,
  maxResultBytes: 1024 * 1024,
  maxStackKb: 256,
  maxTimers: 1_000,
  maxHostCalls: 256,
  maxFiles: 32,
  maxFileBytes: 16 * 1024 * 1024,
  maxCodeBytes: 1024 * 1024,
});

/**
 * The Python defaults a caller gets. `prewarm` is not a constant: it is true exactly when the caller
 * gives a `python` object (asking for Python settings means asking for Python), so it is not listed here.
 */
export const DEFAULT_PYTHON: Readonly<Required<Omit<PythonOptions, "prewarm">>> = Object.freeze({
  engine: "pyodide",
  pool: 2,
  maxQueue: 64,
  snapshot: true,
  packages: true,
});

/**
 * The JavaScript defaults that are constants. `isolation` and `workers` depend on the runtime and the
 * machine (worker threads there or not, `availableParallelism()`), so they are resolved, not listed.
 */
export const DEFAULT_JAVASCRIPT: Readonly<
  Required<Pick<JavaScriptOptions, "runsPerWorker" | "maxQueue" | "demoteCpuBound">>
> = Object.freeze({ runsPerWorker: 8, maxQueue: 256, demoteCpuBound: "auto" });

/** `javascript.maxWorkers` defaults to this many threads per core (and never fewer than `workers`). */
export const MAX_WORKERS_PER_CORE = 4;

/** `node:worker_threads` is there (Node, Deno, Bun), found without importing anything Node-only. */
function threadsAvailable(): boolean {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return proc?.getBuiltinModule?.("node:worker_threads") !== undefined;
  } catch {
    return false;
  }
}

function defaultWorkers(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator?.hardwareConcurrency;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? Math.min(n, 64) : 1;
}

/** The seal a caller gets by passing nothing: every layer on. These are values `SealOptions` accepts. */
export const DEFAULT_SEAL: Readonly<Required<SealOptions>> = Object.freeze({
  bubblewrap: true,
  seccomp: true,
  nodePermissions: true,
  dropPrivileges: Object.freeze({ uid: 65534, gid: 65534 }),
});

/** The tool adapters' model-facing output caps (`run_code`'s `output` option; see adapters/tools/format.ts). */
export const DEFAULT_FORMAT = Object.freeze({
  /** Cap on the whole text handed to the model, in characters. */
  maxChars: 8_000,
  /** Images up to this size are inlined as base64 image content. */
  maxImageBytes: 4 * 1024 * 1024,
  /** Text files up to this size are inlined as text. */
  maxInlineTextBytes: 16 * 1024,
});

/** Code mode's caps (adapters/tools/code-mode.ts). */
export const DEFAULT_CODE_MODE = Object.freeze({
  /** Tool calls one program may make. */
  maxToolCalls: 32,
  /** Size cap on one tool's JSON output handed to the guest, in bytes. */
  maxToolOutputBytes: 256 * 1024,
});

/** The MCP HTTP server's settings (`serveHttp`, `wasmcell mcp --http`; see adapters/mcp/http.ts). */
export const DEFAULT_MCP_HTTP = Object.freeze({
  /** TCP port; 0 picks a free one. */
  port: 0,
  /** Address to bind; anything but loopback needs a bearer token. */
  host: "127.0.0.1",
  /** Session ids on (one process per client session); true for replicas behind a balancer. */
  stateless: false,
  /** Open sessions at once; past it initialize gets 503 + Retry-After. */
  maxSessions: 128,
  /** A session with no request for this long (ms) is closed. */
  sessionTtlMs: 600_000,
  /** Tool calls in flight (queued or running) across all clients; past it 503 + Retry-After. */
  maxInflight: 256,
  /** Tool calls in flight for one client. */
  maxInflightPerClient: 16,
  /** Tell stateless clients apart by the last X-Forwarded-For hop. */
  trustProxy: false,
  /** On SIGTERM, how long (ms) in-flight calls may finish before the CLI closes. */
  drainMs: 25_000,
});

/** The seal after resolution: what the jail is asked to set up. */
export interface ResolvedSeal {
  bubblewrap: boolean;
  seccomp: "enforce" | "kill" | false;
  nodePermissions: boolean;
  dropPrivileges: { uid: number; gid: number } | false;
}

export interface ResolvedOptions {
  limits: Limits;
  hostFunctions: Record<string, HostFunction>;
  /** `javascript.wasmModule`, as given. */
  wasmModule: WasmModuleSource | undefined;
  /**
   * Where JavaScript runs; `isolationGiven` says whether the caller chose it (an edge build honours the
   * default and refuses an explicit "thread").
   */
  javascript: {
    isolation: "thread" | "in-process";
    isolationGiven: boolean;
    workers: number;
    maxWorkers: number;
    runsPerWorker: number;
    maxQueue: number;
    demoteCpuBound: "auto" | boolean;
  };
  /** `prewarm` is true only when the caller gave a `python` object (or set it explicitly). */
  python: Required<PythonOptions>;
  seal: ResolvedSeal;
  /** Undefined: no network. */
  network: NetworkPolicy | undefined;
  /** The caller's onEvent, wrapped (time stamped, throws swallowed). */
  emit: ((event: EventInput) => void) | undefined;
}

/** True for a compiled module from any realm (edge-runtime and iframes have their own WebAssembly). */
export function isWasmModule(value: unknown): boolean {
  return Object.prototype.toString.call(value) === "[object WebAssembly.Module]";
}

/** Turns `SealOptions` (already validated) into what the jail sets up; `{}` gives every layer on. */
function resolveSeal(seal: SealOptions): ResolvedSeal {
  const seccomp = seal.seccomp ?? DEFAULT_SEAL.seccomp;
  const drop = seal.dropPrivileges ?? DEFAULT_SEAL.dropPrivileges;
  return {
    bubblewrap: seal.bubblewrap ?? DEFAULT_SEAL.bubblewrap,
    seccomp: seccomp === true ? "enforce" : seccomp,
    nodePermissions: seal.nodePermissions ?? DEFAULT_SEAL.nodePermissions,
    dropPrivileges: drop === true ? { uid: 65534, gid: 65534 } : drop === false ? false : { ...drop },
  };
}

/** The resolved seal with every layer on, for internal callers (doctor, tests) that need one. */
export const RESOLVED_DEFAULT_SEAL: Readonly<ResolvedSeal> = Object.freeze(resolveSeal({}));

const positiveInt = (max: number) => z.number().int().positive().max(max);
const limitsSchema = z
  .object({
    timeoutMs: positiveInt(24 * 3600 * 1000),
    memoryMb: positiveInt(4096),
    maxOutputBytes: z
      .number()
      .int()
      .nonnegative()
      .max(1 << 30),
    maxResultBytes: positiveInt(1 << 30),
    maxStackKb: z
      .number()
      .int()
      .min(16)
      .max(64 * 1024),
    maxTimers: z.number().int().nonnegative().max(1_000_000),
    maxHostCalls: z.number().int().nonnegative().max(1_000_000),
    maxFiles: z.number().int().nonnegative().max(10_000),
    maxFileBytes: z
      .number()
      .int()
      .nonnegative()
      .max(1 << 30),
    maxCodeBytes: positiveInt(64 << 20),
  })
  .partial()
  .strict();

// A host function name must be a plain identifier the guest can call, and must not shadow a global.
const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const hostFunctionsSchema = z.record(
  z
    .string()
    .regex(identifier, "must be a JavaScript identifier")
    .refine((name) => !name.startsWith("__wasmcell_net_"), "the __wasmcell_net_ prefix is the engine's own"),
  z.custom<HostFunction>((v) => typeof v === "function", "must be a function"),
);

const sealSchema = z
  .object({
    bubblewrap: z.boolean(),
    seccomp: z.union([z.boolean(), z.literal("kill")]),
    nodePermissions: z.boolean(),
    dropPrivileges: z.union([
      z.boolean(),
      z
        .object({
          uid: z
            .number()
            .int()
            .min(1)
            .max(2 ** 31),
          gid: z
            .number()
            .int()
            .min(1)
            .max(2 ** 31),
        })
        .strict(),
    ]),
  })
  .partial()
  .strict();

const networkCapsShape = {
  maxRequests: z.number().int().nonnegative().max(100_000),
  maxRequestBytes: z
    .number()
    .int()
    .nonnegative()
    .max(1 << 30),
  maxResponseBytes: z
    .number()
    .int()
    .nonnegative()
    .max(1 << 30),
  maxTotalBytes: z
    .number()
    .int()
    .nonnegative()
    .max(2 ** 40),
  timeoutMs: positiveInt(24 * 3600 * 1000),
  maxRedirects: z.number().int().nonnegative().max(20),
  methods: z.array(z.string().regex(/^[A-Za-z]{1,32}$/, "must be an HTTP method name")).max(32),
};
const allowSchema = z.array(z.union([z.string(), z.object({}).passthrough()])).max(1_000);
const networkSchema = z.union([
  z.literal(false),
  z
    .object({
      allow: allowSchema,
      ...networkCapsShape,
      resolve: z.custom<Resolver>((v) => typeof v === "function", "must be a function"),
    })
    .partial()
    .required({ allow: true })
    .strict(),
]);
const requestNetworkSchema = z.union([
  z.literal(false),
  z
    .object({ allow: allowSchema, ...networkCapsShape })
    .partial()
    .strict(),
]);

const optionsSchema = z
  .object({
    limits: limitsSchema,
    javascript: z
      .object({
        hostFunctions: hostFunctionsSchema,
        wasmModule: z.custom<WasmModuleSource>(
          (v) =>
            isWasmModule(v) ||
            (typeof v === "object" && v !== null && typeof (v as PromiseLike<unknown>).then === "function"),
          "must be a WebAssembly.Module or a promise of one",
        ),
        isolation: z.enum(["thread", "in-process"]),
        workers: z.number().int().min(1).max(64),
        maxWorkers: z.number().int().min(1).max(256),
        runsPerWorker: z.number().int().min(1).max(8),
        maxQueue: z.number().int().nonnegative().max(1_000_000),
        demoteCpuBound: z.union([z.literal("auto"), z.boolean()]),
      })
      .partial()
      .strict(),
    python: z
      .object({
        engine: z.enum(["pyodide", "native"]),
        pool: z.number().int().min(1).max(64),
        maxQueue: z.number().int().nonnegative().max(1_000_000),
        prewarm: z.boolean(),
        snapshot: z.boolean(),
        packages: z.boolean(),
      })
      .partial()
      .strict(),
    seal: sealSchema,
    network: networkSchema,
    onEvent: z.custom<SandboxEventListener>((v) => typeof v === "function", "must be a function"),
  })
  .partial()
  .strict();

const requestSchema = z
  .object({
    language: z.enum(LANGUAGES),
    code: z.string(),
    engine: z.enum(ENGINES).optional(),
    files: z.record(z.string(), z.union([z.string(), z.instanceof(Uint8Array)])).optional(),
    limits: limitsSchema.optional(),
    hostFunctions: hostFunctionsSchema.optional(),
    onOutput: z
      .custom<NonNullable<RunRequest["onOutput"]>>((v) => typeof v === "function", "must be a function")
      .optional(),
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, "must be an AbortSignal").optional(),
    network: requestNetworkSchema.optional(),
  })
  .strict();

/** Turns the first zod issue into an InvalidOptionError naming the field path. */
function fail(prefix: string, error: z.ZodError): never {
  let issue = error.issues[0];
  // `false | {...}` fields: report what is wrong with the object (the last branch), not "invalid input".
  while (issue?.code === "invalid_union" && issue.errors.length > 0) {
    const branch = issue.errors[issue.errors.length - 1]?.[0];
    if (!branch) break;
    issue = { ...branch, path: [...issue.path, ...branch.path] };
  }
  if (!issue) throw new InvalidOptionError(prefix || "options", "invalid");
  let path = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  let message = issue.message;
  if (issue.code === "unrecognized_keys") {
    path = [path, issue.keys[0]].filter(Boolean).join(".");
    message = "unknown option";
  }
  throw new InvalidOptionError(path || "options", message);
}

export function resolveOptions(input: SandboxOptions | undefined): ResolvedOptions {
  if (input !== undefined && (typeof input !== "object" || input === null)) {
    throw new InvalidOptionError("options", "must be an object");
  }
  const parsed = optionsSchema.safeParse(input ?? {});
  if (!parsed.success) fail("", parsed.error);
  const o = input ?? {};
  const workers = o.javascript?.workers ?? defaultWorkers();
  const maxWorkers = o.javascript?.maxWorkers ?? Math.max(workers, MAX_WORKERS_PER_CORE * defaultWorkers());
  if (maxWorkers < workers)
    throw new InvalidOptionError("javascript.maxWorkers", `must be at least javascript.workers (${workers})`);
  return {
    limits: { ...DEFAULT_LIMITS, ...stripUndefined(o.limits ?? {}) },
    hostFunctions: { ...(o.javascript?.hostFunctions ?? {}) },
    wasmModule: o.javascript?.wasmModule,
    javascript: {
      isolation: o.javascript?.isolation ?? (threadsAvailable() ? "thread" : "in-process"),
      isolationGiven: o.javascript?.isolation !== undefined,
      workers,
      maxWorkers,
      runsPerWorker: o.javascript?.runsPerWorker ?? DEFAULT_JAVASCRIPT.runsPerWorker,
      maxQueue: o.javascript?.maxQueue ?? DEFAULT_JAVASCRIPT.maxQueue,
      demoteCpuBound: o.javascript?.demoteCpuBound ?? DEFAULT_JAVASCRIPT.demoteCpuBound,
    },
    python: { ...DEFAULT_PYTHON, prewarm: o.python !== undefined, ...stripUndefined(o.python ?? {}) },
    seal: resolveSeal(o.seal ?? {}),
    network: o.network ? resolveNetwork(o.network) : undefined,
    emit: eventSink(o.onEvent),
  };
}

function parseRules(entries: readonly AllowEntryInput[], field: string): AllowRule[] {
  return entries.map((entry, i) => {
    try {
      return parseAllowEntry(entry);
    } catch (error) {
      if (error instanceof AllowEntryError) throw new InvalidOptionError(`${field}.allow[${i}]`, error.message);
      throw error;
    }
  });
}

function resolveNetwork(network: NetworkOptions): NetworkPolicy {
  return {
    ...DEFAULT_NETWORK,
    ...stripUndefined({ ...network, allow: undefined, methods: undefined, resolve: undefined }),
    rules: parseRules(network.allow, "network"),
    methods: network.methods?.map((m) => m.toUpperCase()),
    resolve: network.resolve,
  };
}

/** A run's network: the sandbox's, or narrower (never wider). */
function resolveRequestNetwork(request: RunRequest, options: ResolvedOptions): NetworkPolicy | undefined {
  const asked = request.network;
  if (asked === undefined) return options.network;
  if (asked === false) return undefined;
  if (!options.network) throw new InvalidOptionError("request.network", "the sandbox has no network to narrow");
  const { allow, methods, ...caps } = asked;
  const narrowed = narrowPolicy(options.network, {
    ...stripUndefined(caps),
    ...(allow ? { rules: parseRules(allow, "request.network") } : {}),
    ...(methods ? { methods } : {}),
  });
  if (Array.isArray(narrowed)) throw new InvalidOptionError(`request.network.${narrowed[0]}`, narrowed[1]);
  return narrowed;
}

/** A request after validation: defaults merged, files as bytes, the engine chosen. */
export interface ResolvedRequest {
  language: Language;
  code: string;
  engine: EngineName;
  files: Map<string, Uint8Array>;
  limits: Limits;
  hostFunctions: Record<string, HostFunction>;
  onOutput?: NonNullable<RunRequest["onOutput"]>;
  signal?: AbortSignal;
  /** The run's network policy; undefined means no network. */
  network?: NetworkPolicy;
  /** Where the engine reports security events (undefined when nobody listens). */
  emit?: (event: EventInput) => void;
}

const encoder = new TextEncoder();

export function resolveRequest(request: RunRequest, options: ResolvedOptions): ResolvedRequest {
  if (typeof request !== "object" || request === null) throw new InvalidOptionError("request", "must be an object");
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) fail("request", parsed.error);
  const limits: Limits = { ...options.limits, ...stripUndefined(request.limits ?? {}) };
  const codeBytes = encoder.encode(request.code).byteLength;
  if (codeBytes > limits.maxCodeBytes) {
    throw new InvalidOptionError(
      "request.code",
      `is ${codeBytes} bytes, over the ${limits.maxCodeBytes}-byte limit (limits.maxCodeBytes)`,
    );
  }
  const engine = request.engine ?? defaultEngine(request.language, options);
  const allowed: readonly EngineName[] = request.language === "python" ? ["pyodide", "native"] : ["quickjs"];
  if (!allowed.includes(engine)) {
    throw new InvalidOptionError(
      "request.engine",
      `"${engine}" does not run ${request.language}; use ${allowed.map((e) => `"${e}"`).join(" or ")}`,
    );
  }
  const files = new Map<string, Uint8Array>();
  let total = 0;
  for (const [path, content] of Object.entries(request.files ?? {})) {
    const problem = checkRelativePath(path);
    if (problem) throw new InvalidOptionError(`request.files[${JSON.stringify(path)}]`, problem);
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    total += bytes.byteLength;
    files.set(normalizePath(path), bytes);
  }
  if (total > limits.maxFileBytes) {
    throw new InvalidOptionError(
      "request.files",
      `hold ${total} bytes, over the ${limits.maxFileBytes}-byte limit (limits.maxFileBytes)`,
    );
  }
  const resolved: ResolvedRequest = {
    language: request.language,
    code: request.code,
    engine,
    files,
    limits,
    hostFunctions: { ...options.hostFunctions, ...(request.hostFunctions ?? {}) },
  };
  if (request.onOutput) resolved.onOutput = request.onOutput;
  if (request.signal) resolved.signal = request.signal;
  const network = resolveRequestNetwork(request, options);
  if (network) resolved.network = network;
  if (options.emit) resolved.emit = options.emit;
  return resolved;
}

function defaultEngine(language: Language, options: ResolvedOptions): EngineName {
  return language === "python" ? options.python.engine : "quickjs";
}

/**
 * A file path the guest sees: relative, inside the working directory, no `..`, no NUL, sane length.
 * Returns what is wrong, or undefined when the path is fine.
 */
export function checkRelativePath(path: string): string | undefined {
  if (path.length === 0) return "the path is empty";
  if (path.length > 1024) return "the path is longer than 1024 characters";
  if (path.includes("\0")) return "the path contains a NUL byte";
  if (path.startsWith("/") || path.startsWith("\\") || /^[A-Za-z]:/.test(path))
    return "the path must be relative to the working directory";
  const parts = path.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (parts.length === 0) return "the path names the working directory itself";
  if (parts.some((p) => p === "..")) return "the path must not contain '..'";
  if (parts.some((p) => p.length > 255)) return "a path component is longer than 255 characters";
  return undefined;
}

export function normalizePath(path: string): string {
  return path
    .split(/[\\/]+/)
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
