// `javascript`: host functions, the compiled engine, and the worker-thread pool. The option, its
// defaults (the constant ones; `isolation` and `workers` depend on the runtime and the machine) and
// its schema side by side.

import { z } from "zod";
import type { AsParsed, Same } from "./zod.ts";
import type { HostFunction, WasmModuleSource } from "../core/types.ts";

/**
 * Runs one QuickJS engine (in a worker, or in-process) takes at once: the most `runsPerWorker` may be.
 * The engine keeps this many warm cells (runtime + service realm), so admitting more would make each
 * extra run build a runtime from scratch, the throughput cliff bounded admission removes.
 */
export const MAX_RUNS_PER_WORKER = 8;

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
   * mostly await host functions onto few threads. Parked runs (`maxParked`: a run awaiting a host
   * function, a timer, a fetch) do not count: this bounds the runs taking turns computing.
   * @defaultValue 8
   */
  runsPerWorker?: number;
  /**
   * Whether a worker thread held by one synchronous stretch of guest code for more than 2 ms (and 2 ms of
   * its own CPU after that) lowers its
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
   * Runs that may be **parked** at once beside the running ones (`isolation: "thread"`): a run that
   * waits for a host function's answer, a timer, a `fetch` or any host promise, with nothing to compute
   * until then, gives its running slot and its thread's turn to another run and costs only the memory
   * its state holds (about 100 KB measured, budgeted at `PARKED_RUN_BYTES`). Admission counts running
   * runs (`maxWorkers` × `runsPerWorker`) and parked ones apart, and a `QueueFullError` says which bound
   * held the queue. 0: a waiting run keeps its running slot.
   * @defaultValue a quarter of the machine's memory over `PARKED_RUN_BYTES` (512 KiB), from 256 to
   * 100,000 (1,024 where the machine's memory cannot be read)
   */
  maxParked?: number;
  /**
   * Runs that may wait for a free slot (each worker, or the in-process engine, runs up to 8 at once)
   * before `run()` throws `QueueFullError`.
   * @defaultValue 256
   */
  maxQueue?: number;
}

/**
 * The JavaScript defaults that are constants. `isolation` and `workers` depend on the runtime and the
 * machine (worker threads there or not, `availableParallelism()`), so they are resolved, not listed.
 */
export const DEFAULT_JAVASCRIPT: Readonly<
  Required<Pick<JavaScriptOptions, "runsPerWorker" | "maxQueue" | "demoteCpuBound">>
> = Object.freeze({ runsPerWorker: 8, maxQueue: 256, demoteCpuBound: "auto" });

/** What one parked run is budgeted at when `javascript.maxParked` is derived from the machine. */
export const PARKED_RUN_BYTES = 512 * 1024;
/** The share of the machine's memory `javascript.maxParked` budgets for parked runs by default. */
export const PARKED_MEMORY_SHARE = 0.25;
/** The most `javascript.maxParked` may be. */
export const MAX_PARKED = 100_000;

/**
 * `javascript.maxParked`'s default: a quarter of the machine's memory over PARKED_RUN_BYTES, from 256 to
 * MAX_PARKED; 1,024 where `node:os` is not there (found without importing anything Node-only).
 */
export function defaultMaxParked(): number {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  let total: unknown;
  try {
    total = (proc?.getBuiltinModule?.("node:os") as { totalmem?: () => number } | undefined)?.totalmem?.();
  } catch {
    total = undefined;
  }
  if (typeof total !== "number" || !(total > 0)) return 1_024;
  return Math.min(MAX_PARKED, Math.max(256, Math.floor((total * PARKED_MEMORY_SHARE) / PARKED_RUN_BYTES)));
}

/** `javascript.maxWorkers` defaults to this many threads per core (and never fewer than `workers`). */
export const MAX_WORKERS_PER_CORE = 4;

/** `node:worker_threads` is there (Node, Deno, Bun), found without importing anything Node-only. */
export function threadsAvailable(): boolean {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return proc?.getBuiltinModule?.("node:worker_threads") !== undefined;
  } catch {
    return false;
  }
}

export function defaultWorkers(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator?.hardwareConcurrency;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? Math.min(n, 64) : 1;
}

/** True for a compiled module from any realm (edge-runtime and iframes have their own WebAssembly). */
export function isWasmModule(value: unknown): boolean {
  return Object.prototype.toString.call(value) === "[object WebAssembly.Module]";
}

// A host function name must be a plain identifier the guest can call, and must not shadow a global.
export const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
export const hostFunctionsSchema = z.record(
  z
    .string()
    .regex(identifier, "must be a JavaScript identifier")
    .refine((name) => !name.startsWith("__wasmcell_net_"), "the __wasmcell_net_ prefix is the engine's own"),
  z.custom<HostFunction>((v) => typeof v === "function", "must be a function"),
);

export const javascriptSchema = z
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
    runsPerWorker: z.number().int().min(1).max(MAX_RUNS_PER_WORKER),
    maxParked: z.number().int().nonnegative().max(MAX_PARKED),
    maxQueue: z.number().int().nonnegative().max(1_000_000),
    demoteCpuBound: z.union([z.literal("auto"), z.boolean()]),
  })
  .partial()
  .strict();

/** The schema and `JavaScriptOptions` name the same fields with the same types (checked when compiling). */
export const javascriptTied: Same<z.infer<typeof javascriptSchema>, AsParsed<JavaScriptOptions>> = true;
