// What `wasmcell mcp` and `wasmcell worker` share: the sandbox's flags (limits, the JavaScript and
// Python pools)
// and waiting for the signal that starts a drain.

import type { Limits } from "../core/types.ts";
import { UsageError, positiveInt } from "./usage.ts";

export function limitsFromFlags(values: { "timeout-ms"?: string; "memory-mb"?: string }): Partial<Limits> {
  const limits: Partial<Limits> = {};
  const timeoutMs = positiveInt("--timeout-ms", values["timeout-ms"]);
  const memoryMb = positiveInt("--memory-mb", values["memory-mb"]);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;
  return limits;
}

/** One run per JavaScript thread: a benign call never shares a thread (and its deadline) with a CPU loop. */
export function javascriptFromFlags(values: { "js-workers"?: string; "js-max-workers"?: string }): {
  workers?: number;
  maxWorkers?: number;
  runsPerWorker: number;
} {
  const javascript: { workers?: number; maxWorkers?: number; runsPerWorker: number } = { runsPerWorker: 1 };
  const workers = positiveInt("--js-workers", values["js-workers"]);
  const maxWorkers = positiveInt("--js-max-workers", values["js-max-workers"]);
  if (workers !== undefined) javascript.workers = workers;
  if (maxWorkers !== undefined) javascript.maxWorkers = maxWorkers;
  if (maxWorkers !== undefined && workers !== undefined && maxWorkers < workers)
    throw new UsageError(`--js-max-workers (${maxWorkers}) must be at least --js-workers (${workers})`);
  return javascript;
}

/**
 * The Pyodide pool: one sidecar unless --python-pool says more (the server and the worker start it on
 * the first Python call); --python-standby sidecars wait beside it to replace one a timeout kills.
 */
export function pythonFromFlags(values: { "python-pool"?: string; "python-standby"?: string }): {
  pool: number;
  standby?: number;
} {
  const pool = positiveInt("--python-pool", values["python-pool"]) ?? 1;
  const raw = values["python-standby"];
  if (raw === undefined || raw === "0") return { pool };
  const standby = positiveInt("--python-standby", raw)!;
  if (standby > 8) throw new UsageError(`--python-standby must be at most 8, got ${standby}`);
  return { pool, standby };
}

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}
