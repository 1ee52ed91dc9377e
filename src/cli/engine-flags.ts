// What `wasmcell mcp` and `wasmcell worker` share: the sandbox's flags (limits, the JavaScript pool)
// and waiting for the signal that starts a drain.

import type { Limits } from "../types.ts";
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

export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}
