// What every native run has around it, cold jail or warm child alike: its output and result pipe
// bounded by its limits, the result's common fields, the driver's request, the host's own view of
// the deadline, and the error for a process that ended without a result. index.ts (a cold jail) and
// warm-run.ts (a child of a warm parent) differ only in how the process starts and ends.

import { GRACE, type Deadline } from "../../kit/deadline.ts";
import type { GuestError, OutputFile, RunResult } from "../../core/types.ts";
import type { JailExit } from "../../jail/index.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import { exitError, type Observed } from "../lib/python/result.ts";
import { CappedOutput } from "./capped-output.ts";
import { PROXY_SOCKET } from "./jail.ts";
import { ResultPipe } from "./result-pipe.ts";

export type ResultBase = Omit<RunResult, "ok" | "value" | "error">;

export interface RunFrame {
  output: CappedOutput;
  pipe: ResultPipe;
  /** The result's fields so far (output, display items, stats); wallMs counts from `started`. */
  base: (extra?: { peakMemoryBytes?: number }) => ResultBase;
}

/** The output and result pipe of one run, bounded by its limits. */
export function runFrame(request: ResolvedRequest, started: number): RunFrame {
  const { limits } = request;
  const output = new CappedOutput(limits.maxOutputBytes, request.onOutput);
  // Envelope + base64 files; anything longer is a guest writing junk to fd 4. Display items come
  // before it on lines of their own, each parsed and counted as it arrives (result-pipe.ts).
  const resultCap =
    limits.maxResultBytes + Math.ceil((limits.maxFileBytes * 4) / 3) + limits.maxFiles * 1024 + 64 * 1024;
  const pipe = new ResultPipe(limits, request.onResult, resultCap);
  const base = (extra: { peakMemoryBytes?: number } = {}): ResultBase => {
    const text = output.finish();
    return {
      language: request.language,
      stdout: text.stdout,
      stderr: text.stderr,
      outputTruncated: text.outputTruncated,
      files: [] as OutputFile[],
      results: [...pipe.display.items],
      stats: { engine: "native" as const, wallMs: performance.now() - started, outputBytes: output.total, ...extra },
    };
  };
  return { output, pipe, base };
}

/**
 * The driver's request (driver.py) and the host's own observation for the `timeout` kind: its clock
 * had passed the soft deadline it armed the driver's alarm for (a guest's early `raise
 * KeyboardInterrupt` stays a runtime error).
 */
export function driverRequest(
  request: ResolvedRequest,
  deadline: Deadline,
  withNetwork: boolean,
): { body: Record<string, unknown>; observed: () => Observed } {
  const { limits } = request;
  const files: Record<string, string> = {};
  for (const [path, bytes] of request.files) files[path] = Buffer.from(bytes).toString("base64");
  const earlyMs = Math.min(GRACE.nativeSoftEarlyMs, limits.timeoutMs * GRACE.nativeSoftEarlyShare);
  return {
    body: {
      code: request.code,
      maxResultBytes: limits.maxResultBytes,
      files,
      maxFiles: limits.maxFiles,
      maxFileBytes: limits.maxFileBytes,
      // The run's limits whole (the display module reads its caps from them).
      limits,
      // The driver's own alarm, a little before our SIGKILL, turns a Python loop into a clean
      // `timeout` with a traceback; code stuck in C meets the SIGKILL. Absolute, so the
      // interpreter's start-up counts against the deadline as it does for the SIGKILL.
      softDeadline: deadline.wallClockAt(earlyMs) / 1000,
      ...(withNetwork ? { proxySocket: PROXY_SOCKET } : {}),
    },
    observed: () => ({ interrupted: deadline.passed(-earlyMs), memoryCapHit: false }),
  };
}

/** The error for a process the host killed at the run's deadline. */
export function deadlineError(exit: JailExit, request: ResolvedRequest): GuestError {
  return exitError(exit, {
    who: "the Python process",
    deadlineKilled: true,
    aborted: false,
    timeoutMs: request.limits.timeoutMs,
    memoryCap: "",
  });
}

/** The error for a process that ended on its own without a result (`memoryMechanism`: how its cap was held). */
export function exitWithoutResult(
  exit: JailExit,
  request: ResolvedRequest,
  stderr: string,
  memoryMechanism: string,
): GuestError {
  const { limits } = request;
  const tail = stderr.trim().split("\n").slice(-3).join("\n");
  return exitError(exit, {
    who: "the Python process",
    deadlineKilled: exit.timedOut,
    aborted: false,
    timeoutMs: limits.timeoutMs,
    memoryCap: `its ${limits.memoryMb} MB cap (limits.memoryMb, ${memoryMechanism})`,
    ...(tail ? { detail: tail } : {}),
  });
}
