// The messages between the host and a QuickJS worker thread, and the one place where what a worker
// sends back is checked. Messages travel by structured clone over the worker's port: a result value
// crosses once, as the data the engine rebuilt (no second serialisation). A worker ran guest code, so
// everything it sends is untrusted input: every field is type-checked and bounded against the run's
// own limits, paths are re-checked, and the result handed to the caller is a fresh object built here.

import type { SnapshotRejection } from "../../../core/errors.ts";
import { checkRelativePath } from "../../../options/index.ts";
import { checkReturnedFiles } from "../../../kit/files.ts";
import { parseDisplayItems } from "../../../kit/display.ts";
import {
  ERROR_KINDS,
  OUTPUT_LIMITS,
  type GuestError,
  type Language,
  type Limits,
  type OutputFile,
  type RunResult,
} from "../../../core/types.ts";

/** A request as it crosses to the worker: data only (host functions become names, signals a shared flag). */
export interface WireRequest {
  language: Language;
  code: string;
  files: Map<string, Uint8Array>;
  limits: Limits;
  /** Host functions the run may call; each call is proxied back to the host by name. */
  hostNames: string[];
  /** The caller wants output chunks as they are written. */
  output: boolean;
  /** The caller wants display items as they are shown. */
  display: boolean;
  /** Set to 1 by the host when the caller's signal aborts; the worker's interrupt handler reads it. */
  abort: Int32Array | undefined;
  /**
   * Who owns the run before it starts, decided by one compare-and-swap on shared memory: the worker
   * swaps 0 -> CLAIMED as it begins the run, the host swaps 0 -> REVOKED to take back a run still
   * queued behind a long synchronous stretch and send it elsewhere. Exactly one side wins, so a run
   * never starts twice and never starts after being moved.
   */
  claim: Int32Array;
  /** The thread may lower its priority while this run holds it in a long synchronous stretch (priority.ts). */
  demote: boolean;
}

export const CLAIMED = 1;
export const REVOKED = 2;

/**
 * Shared memory each worker writes as it begins runs, so the host knows which runs began and when
 * without a message per run: `Int32Array[0]` is the sequence number (per worker, from 1, in the order
 * the host posted them) of the last run begun; `Float64Array[seq % PROGRESS_RING]` is when it began
 * (`performance.timeOrigin + performance.now()`, comparable across threads). After the ring, at
 * HEARTBEAT_OFFSET, one Float64 the worker rewrites every time its event loop turns while it has runs
 * (at least every HEARTBEAT_MS): a heartbeat older than that means the thread is inside one long
 * synchronous stretch (a CPU-bound guest, or a builtin that never polls), and runs queued behind it
 * would wait for it.
 */
/**
 * Sized for parked runs: a run's stamps are overwritten once this many runs have been posted to its
 * worker after it, and with parking thousands are open on one worker at once (`javascript.maxParked`
 * is at most 100,000 over all workers). 65,536 × 2 rings × 8 bytes = 1 MiB per worker.
 */
export const PROGRESS_RING = 65_536;
export const HEARTBEAT_OFFSET = 8 + 8 * PROGRESS_RING;
/** Int32: the worker's Linux thread id (0 elsewhere), so the host can read how much CPU it burns. */
export const TID_OFFSET = HEARTBEAT_OFFSET + 8;
/** Int32: the thread's priority state (priority.ts: NORMAL, DEMOTED, LIFTED, STUCK). */
export const NICE_OFFSET = TID_OFFSET + 4;
/**
 * Int32: how many messages the host has posted to the worker, bumped (and notified) after every
 * postMessage. An idle worker sleeps on it with `Atomics.wait` for LINGER_MS after a run instead of
 * returning to its event loop at once, so the next message wakes it by futex rather than through
 * epoll and the port; it sleeps only while it has handled as many messages as this count says were
 * posted, so no message ever waits for the linger to end. The worker can write this word too: only
 * its own sleep reads it, the host never does.
 */
export const DOORBELL_OFFSET = TID_OFFSET + 8;
/**
 * Int32: what an idle worker is doing, its own word (a hint for placement only, never a guarantee):
 * TIDYING while a run is open or its after-run work (freeing its context, building the next) is still
 * to do, IDLE back in its event loop, LINGERING asleep on the doorbell with the next context built.
 */
export const IDLE_STATE_OFFSET = DOORBELL_OFFSET + 4;
export const TIDYING = 0;
export const IDLE = 1;
export const LINGERING = 2;
/**
 * Int32: the sequence number of the run whose guest code holds the thread right now (inside a turn,
 * src/engines/lib/quickjs/turns.ts), 0 between turns. The host's deadline watch blames only that run:
 * a run queued behind another's turn is not stuck, it is waiting (deadline-watch.ts).
 */
export const HOLDER_OFFSET = DOORBELL_OFFSET + 8;
/**
 * Float64: the milliseconds this thread has spent in guest turns so far, every run's
 * (src/engines/lib/quickjs/turns.ts), rewritten when a turn ends.
 */
export const TURN_TOTAL_OFFSET = HOLDER_OFFSET + 8;
/**
 * Float64 ring like the begin stamps: `[seq % PROGRESS_RING]` is run `seq`'s mark, the turn total when
 * it began plus its own turns since. The total less the mark is its credit: the milliseconds its thread
 * spent in other runs' turns since it began, which its own deadline does not count. The host moves its
 * view of the run's deadline by as much, so both sides agree on when the run is due.
 */
export const CREDIT_OFFSET = TURN_TOTAL_OFFSET + 8;
export const PROGRESS_BYTES = CREDIT_OFFSET + 8 * PROGRESS_RING;
/** How often a worker with runs rewrites its heartbeat. */
export const HEARTBEAT_MS = 10;

export type HostMessage =
  | { t: "run"; id: number; req: WireRequest; session?: number }
  | { t: "abort"; id: number }
  | { t: "reply"; id: number; call: number; ok: true; json: string | undefined }
  | { t: "reply"; id: number; call: number; ok: false; name: string; message: string; unserialisable: boolean }
  /**
   * `state`: resume from these (unsealed, authenticated) state bytes, at most `maxMemoryBytes` of
   * memory; `forkOf`: a copy of that session of this worker (its state never leaves the thread).
   */
  | { t: "session-open"; session: number; state?: Uint8Array; maxMemoryBytes?: number; forkOf?: number }
  /** `maxMemoryBytes`: a session with more memory is refused as `size` (state-codec.ts, maxSessionMemory). */
  | { t: "session-save"; session: number; maxMemoryBytes?: number }
  | { t: "session-close"; session: number };

export type WorkerMessage =
  | { t: "ready" }
  | { t: "output"; id: number; stream: "stdout" | "stderr"; text: string }
  /** One display item as the run showed it (re-parsed and counted by the host: kit/display.ts). */
  | { t: "display"; id: number; item: unknown }
  | { t: "call"; id: number; call: number; name: string; args: unknown[] }
  | { t: "call-end"; id: number; call: number }
  /** The run waits for an event with nothing to do until then (`parked`), or stops waiting. */
  | { t: "park"; id: number; parked: boolean }
  /** `marks`/`names`: the Error objects inside `result.value` and their names, which structured clone drops. */
  | { t: "done"; id: number; result: unknown; marks: unknown[]; names: unknown[] }
  /** `rejected`: the SnapshotRejectedError reason when a resume's state was refused. */
  | { t: "session-opened"; session: number; error: string | undefined; rejected?: SnapshotRejection }
  /** The session's state bytes, or why there are none (`unsupported`: SnapshotUnsupportedError's reason). */
  | {
      t: "session-saved";
      session: number;
      state?: Uint8Array;
      error?: string;
      unsupported?: boolean;
      /** The refusal is the session's size (SnapshotUnsupportedError `size`). */
      size?: boolean;
    };

const REJECTIONS: readonly SnapshotRejection[] = [
  "corrupt",
  "size",
  "lock",
  "engine",
  "version",
  "key",
  "authentication",
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isId = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const MAX_NAME = 256;

/** Checks the envelope of a message from a worker; the payload of `done` is checked by `parseResult`. */
export function parseWorkerMessage(data: unknown): WorkerMessage | undefined {
  if (!isObject(data)) return undefined;
  switch (data.t) {
    case "ready":
      return { t: "ready" };
    case "output":
      if (!isId(data.id) || (data.stream !== "stdout" && data.stream !== "stderr") || typeof data.text !== "string")
        return undefined;
      return { t: "output", id: data.id, stream: data.stream, text: data.text };
    case "display":
      return isId(data.id) ? { t: "display", id: data.id, item: data.item } : undefined;
    case "call":
      if (!isId(data.id) || !isId(data.call) || typeof data.name !== "string" || !Array.isArray(data.args))
        return undefined;
      return { t: "call", id: data.id, call: data.call, name: data.name, args: data.args as unknown[] };
    case "call-end":
      return isId(data.id) && isId(data.call) ? { t: "call-end", id: data.id, call: data.call } : undefined;
    case "park":
      return isId(data.id) && typeof data.parked === "boolean"
        ? { t: "park", id: data.id, parked: data.parked }
        : undefined;
    case "done":
      if (!isId(data.id) || !Array.isArray(data.marks) || !Array.isArray(data.names)) return undefined;
      return { t: "done", id: data.id, result: data.result, marks: data.marks, names: data.names };
    case "session-opened": {
      if (!isId(data.session) || (data.error !== undefined && typeof data.error !== "string")) return undefined;
      const rejected = REJECTIONS.find((r) => r === data.rejected);
      return rejected
        ? { t: "session-opened", session: data.session, error: data.error, rejected }
        : { t: "session-opened", session: data.session, error: data.error };
    }
    case "session-saved":
      if (!isId(data.session)) return undefined;
      if (data.state instanceof Uint8Array) return { t: "session-saved", session: data.session, state: data.state };
      return {
        t: "session-saved",
        session: data.session,
        error: typeof data.error === "string" ? data.error.slice(0, 4096) : "the worker sent no state",
        unsupported: data.unsupported === true,
        ...(data.size === true ? { size: true } : {}),
      };
    default:
      return undefined;
  }
}

/** Room for the truncation marker the engine appends past `maxOutputBytes`. */
const MARKER_ROOM = 256;

function checkError(e: unknown): GuestError | string {
  if (!isObject(e)) return "error is not an object";
  if (!(ERROR_KINDS as readonly unknown[]).includes(e.kind)) return "unknown error kind";
  if (typeof e.name !== "string" || typeof e.message !== "string") return "error name/message not strings";
  const error: GuestError = { kind: e.kind as GuestError["kind"], name: e.name.slice(0, MAX_NAME), message: e.message };
  if (e.stack !== undefined) {
    if (typeof e.stack !== "string") return "error stack not a string";
    error.stack = e.stack;
  }
  for (const key of ["line", "column"] as const) {
    const v = e[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) return `error ${key} not a position`;
    error[key] = v;
  }
  if (e.limit !== undefined) {
    // Only a cap of what a run returns: the kind-limits (time, memory, stack) are the host's to name.
    const limit = OUTPUT_LIMITS.find((l) => l === e.limit);
    if (limit === undefined || error.kind !== "output_limit") return "error limit is not an output cap";
    error.limit = limit;
  }
  return error;
}

function checkFiles(files: unknown, limits: Limits): OutputFile[] | string {
  if (!Array.isArray(files)) return "files is not an array";
  const over = (bytes: number) => checkReturnedFiles({ length: files.length, bytes }, limits)?.message;
  if (over(0)) return `a worker's answer: ${over(0)}`;
  const out: OutputFile[] = [];
  let total = 0;
  for (const f of files as unknown[]) {
    if (
      !isObject(f) ||
      typeof f.path !== "string" ||
      !(f.bytes instanceof Uint8Array) ||
      typeof f.mimeType !== "string"
    )
      return "a file entry is malformed";
    const problem = checkRelativePath(f.path);
    if (problem) return `file path ${JSON.stringify(f.path.slice(0, 100))}: ${problem}`;
    total += f.bytes.byteLength;
    if (over(total)) return `a worker's answer: ${over(total)}`;
    out.push({ path: f.path, bytes: f.bytes, mimeType: f.mimeType.slice(0, MAX_NAME) });
  }
  return out;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * Turns a worker's `done` message into the caller's RunResult, or says what is wrong with it.
 * `marks[i]` is an Error inside the value (same object, structured clone keeps identity within one
 * message) whose name was `names[i]`: the engine builds every Error as a plain `Error` with an own
 * `name`, and structured clone would turn that into a `TypeError` instance or drop a custom name.
 */
export function parseResult(
  msg: Extract<WorkerMessage, { t: "done" }>,
  language: Language,
  limits: Limits,
): RunResult | string {
  const r = msg.result;
  if (!isObject(r) || typeof r.ok !== "boolean") return "result is not a RunResult";
  if (r.language !== language) return "result names another language";
  const bound = limits.maxOutputBytes + MARKER_ROOM;
  if (typeof r.stdout !== "string" || typeof r.stderr !== "string" || r.stdout.length + r.stderr.length > bound)
    return "stdout/stderr missing or over limits.maxOutputBytes";
  if (typeof r.outputTruncated !== "boolean") return "outputTruncated is not a boolean";
  const files = checkFiles(r.files, limits);
  if (typeof files === "string") return files;
  const shown = parseDisplayItems(r.results, limits);
  if (!shown.ok) return `display items: ${shown.error.message}`;
  const s = r.stats;
  if (!isObject(s) || s.engine !== "quickjs" || !finite(s.wallMs) || !finite(s.outputBytes)) return "stats malformed";
  if (s.peakMemoryBytes !== undefined && !finite(s.peakMemoryBytes)) return "stats.peakMemoryBytes malformed";
  const stats: RunResult["stats"] = { engine: "quickjs", wallMs: s.wallMs, outputBytes: s.outputBytes };
  if (s.peakMemoryBytes !== undefined) stats.peakMemoryBytes = s.peakMemoryBytes;
  const base = {
    language,
    stdout: r.stdout,
    stderr: r.stderr,
    outputTruncated: r.outputTruncated,
    files,
    results: shown.items,
    stats,
  };
  if (!r.ok) {
    const error = checkError(r.error);
    if (typeof error === "string") return error;
    return { ...base, ok: false, error };
  }
  if (msg.marks.length !== msg.names.length) return "error marks malformed";
  for (let i = 0; i < msg.marks.length; i++) {
    const e = msg.marks[i];
    const name = msg.names[i];
    if (!(e instanceof Error) || typeof name !== "string") return "error marks malformed";
    Object.setPrototypeOf(e, Error.prototype);
    e.name = name.slice(0, MAX_NAME);
  }
  return { ...base, ok: true, value: r.value };
}

/**
 * Worker side: the Error objects in a result value, for `parseResult` to restore. Values the engine
 * returns are trees of plain data (a cycle is already the string "[Circular]"); typed arrays, dates and
 * primitives hold no errors and are skipped.
 */
export function collectErrors(value: unknown, marks: Error[], names: string[]): void {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value) || value instanceof Date) return;
  if (value instanceof Error) {
    marks.push(value);
    names.push(value.name);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collectErrors(v, marks, names);
  } else if (value instanceof Map) {
    for (const [k, v] of value) {
      collectErrors(k, marks, names);
      collectErrors(v, marks, names);
    }
  } else if (value instanceof Set) {
    for (const v of value) collectErrors(v, marks, names);
  } else if (!(value instanceof ArrayBuffer)) {
    for (const key in value) collectErrors((value as Record<string, unknown>)[key], marks, names);
  }
}
