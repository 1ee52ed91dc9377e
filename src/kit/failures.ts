// What every engine says when a run fails for a reason the host decides: one constructor and one
// wording per kind, so a model reads the same sentence whichever engine ran its code, and changing
// that sentence is one edit. Guest-caused errors (syntax, runtime, the guest's own exceptions) are
// parsed by each engine's result room; these are the host's verdicts. Imports only the ground floor.

import type { EngineName, GuestError, Language, OutputLimit, RunFailure } from "../core/types.ts";

/**
 * Every `name` a host verdict carries. A test lists them, so a new one is a deliberate addition (a
 * client may branch on `name` as well as `kind`).
 */
export const HOST_ERROR_NAMES = Object.freeze([
  "TimeoutError",
  "AbortError",
  "EngineCrash",
  "SessionLostError",
  "QueueError",
] as const);
export type HostErrorName = (typeof HOST_ERROR_NAMES)[number];

/**
 * How a run that overran its deadline was ended: its own interrupt stopped it (`stopped`), its worker
 * thread was terminated (`terminated`), or its process was killed (`killed`). The model is told which,
 * because a terminated or killed run lost everything it had not returned.
 */
export type TimeoutHow = "stopped" | "terminated" | "killed";

const ENDED: Record<TimeoutHow, string> = {
  stopped: "was stopped",
  terminated: "its worker thread did not answer, so it was terminated",
  killed: "its process was killed",
};

/** The run passed `limits.timeoutMs`. */
export function timedOut(timeoutMs: number, how: TimeoutHow): GuestError {
  return {
    kind: "timeout",
    name: "TimeoutError",
    message: `the run did not finish within ${timeoutMs} ms (limits.timeoutMs) and ${ENDED[how]}; look for an endless loop, or do less work per run`,
  };
}

/**
 * What a run returned was over one of its caps: one wording per cap, whichever engine (or which of an
 * engine's rooms: the guest realm, the worker, the sidecar, the driver, the host's re-check) saw it.
 * `measured`: how much there was, when the checker knows.
 */
export function outputLimit(limit: OutputLimit, max: number, measured?: number): GuestError {
  const message = OUTPUT_WORDS[limit](max, measured);
  return { kind: "output_limit", name: "OutputLimitError", message, limit };
}

const OUTPUT_WORDS: Record<OutputLimit, (max: number, measured: number | undefined) => string> = {
  maxResultBytes: (max, n) =>
    `the result value is ${n === undefined ? "over" : `${n} bytes, over`} the ${max}-byte limit (limits.maxResultBytes); return a summary or write the data to a file`,
  maxFiles: (max) => `the run wrote more than ${max} files (limits.maxFiles)`,
  maxFileBytes: (max) => `the files the run wrote hold more than ${max} bytes (limits.maxFileBytes)`,
  maxResults: (max) =>
    `the run displayed more than ${max} items (limits.maxResults); show fewer figures or tables, or combine them into one`,
  maxDisplayItemBytes: (max, n) =>
    `a displayed item is ${n === undefined ? "over" : `${n} bytes, over`} the ${max}-byte limit (limits.maxDisplayItemBytes); show a smaller figure or table, or write it to a file`,
  maxDisplayBytes: (max) =>
    `the items the run displayed hold more than ${max} bytes together (limits.maxDisplayBytes); show fewer or smaller ones`,
};

/** The caller's signal aborted the run (`where`: what it was doing then, when that helps). */
export function aborted(where?: string): GuestError {
  return {
    kind: "aborted",
    name: "AbortError",
    message: `the run was aborted by the caller's signal${where === undefined ? "" : ` ${where}`}`,
  };
}

/** The engine under the run failed (not the guest's code): `detail` says how, and what happens next. */
export function crashed(detail: string): GuestError {
  return { kind: "crashed", name: "EngineCrash", message: detail };
}

/**
 * A queued run that never produced a trustworthy result: a worker's reply that failed validation, or a
 * job whose workers kept dying. Nothing of it is believed; `detail` says which.
 */
export function lostInQueue(detail: string): GuestError {
  return { kind: "crashed", name: "QueueError", message: detail };
}

/** A session's interpreter is gone (an earlier timeout or crash): its state cannot come back. */
export function sessionLost(why: string): GuestError {
  return {
    kind: "crashed",
    name: "SessionLostError",
    message: `this session was lost (${why}); its state is gone, open a new session`,
  };
}

/** A result for a run that failed before (or without) running guest code: no output, no files. */
export function failedRun(
  engine: EngineName,
  req: { readonly language: Language },
  error: GuestError,
  startedAt: number,
): RunFailure {
  return {
    ok: false,
    error,
    language: req.language,
    stdout: "",
    stderr: "",
    outputTruncated: false,
    files: [],
    results: [],
    stats: { engine, wallMs: performance.now() - startedAt, outputBytes: 0 },
  };
}

/** A host-side error (never a guest value) as one line for a message or an event: `Name: message`. */
export function describeHostError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
