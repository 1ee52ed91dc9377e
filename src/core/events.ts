// The security event channel: one callback (`onEvent` in the sandbox options) that receives what a
// reviewer needs to trust the sandbox — every egress decision, every limit that fired, every denial,
// every engine kill or restart, and an engine being built on first use. Events are plain data built by the host (strings and numbers, never a
// guest object), so a listener may log, store or forward them as they are.
// Nothing here imports Node: the package root must load on edge runtimes too.

import type { NetworkDenialReason } from "./errors.ts";
import { ENGINE_INFO, limitOf, type EngineName, type Limits, type RunResult } from "./types.ts";

interface EventBase {
  /** Milliseconds since the epoch, host clock. */
  time: number;
  engine: EngineName;
}

/** A network request the guest made and what the host decided (one event per hop of a redirect). */
export interface EgressEvent extends EventBase {
  type: "egress";
  method: string;
  /** The host name (or IP literal) asked for, lowercase. */
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (only when `allowed` is false). */
  reason?: NetworkDenialReason;
  /** The address the host checked and connected to (when it got that far). */
  address?: string;
  /** HTTP status of the response (allowed requests that got one). */
  status?: number;
  /** Request body bytes sent and response body bytes received. */
  bytesSent: number;
  bytesReceived: number;
}

/** A limit that ended or cut a run: `limit` names the field in `limits` (or `network`), `value` its setting. */
export interface LimitEvent extends EventBase {
  type: "limit";
  limit: string;
  value: number;
}

/** A run that ended with kind `denied` (the guest tried something the sandbox does not grant). */
export interface DenialEvent extends EventBase {
  type: "denied";
  message: string;
}

/** The engine replaced a process, worker or module (`reason` says why: a kill, a crash, a poisoned module). */
export interface RestartEvent extends EventBase {
  type: "restart";
  reason: string;
}

/**
 * An engine is being built on first use (the Pyodide snapshot was not cached: `wasmcell setup` builds it
 * ahead of time); runs are served meanwhile, more slowly. `estimateMs` is how long the build may take.
 */
export interface EngineBuildingEvent extends EventBase {
  type: "engine.building";
  estimateMs: number;
  message: string;
}

/** That build finished (or failed: `error`). */
export interface EngineBuiltEvent extends EventBase {
  type: "engine.built";
  ms: number;
  error?: string;
}

/** `python.packages` is on but `wasmcell setup` has not installed the package library. */
export interface PackagesMissingEvent extends EventBase {
  type: "packages.missing";
  message: string;
}

/**
 * A file `wasmcell setup` (or an earlier build) recorded did not match its record when an engine went
 * to use it: the Pyodide snapshot is then removed and `rebuilt`; the package library is `refused`
 * (the engine does not start: the error names the file, `wasmcell setup --force` reinstalls).
 */
export interface IntegrityEvent extends EventBase {
  type: "integrity";
  /** The file that did not match (absent when only the message can say). */
  file?: string;
  action: "rebuilt" | "refused";
  message: string;
}

/**
 * An entry of the shared cache (a Pyodide snapshot or a package library of another install or version,
 * unused the longest and held by no live process) was removed to keep the cache under its size budget
 * (`WASMCELL_CACHE_MAX_MB`). Whoever needs it again rebuilds it (`wasmcell setup`).
 */
export interface CacheEvictedEvent extends EventBase {
  type: "cache.evicted";
  file: string;
  bytes: number;
  /** When it was last used (ms since the epoch). */
  lastUsed: number;
  message: string;
}

/**
 * A session's state left or entered an interpreter: `session.snapshot` (snapshot() or fork()),
 * `session.resume` (resume(), a fork's copy, or an evicted session's next run), `session.evicted` (an
 * idle session's state went to the store and its sidecar back to the pool; with `error`, it could not,
 * and why), `session.ended` (a session whose state could not move was ended so its sidecar could serve
 * another run, past `python.maxPinned`: `error` says why; its next run gets a `SessionLostError`).
 * `bytes`: the snapshot's size; `ms`: how long it took; `session`: the session's id.
 */
export interface SessionEvent extends EventBase {
  type: "session.snapshot" | "session.resume" | "session.evicted" | "session.ended";
  session: string;
  bytes: number;
  ms: number;
  error?: string;
}

export type SandboxEvent =
  | SessionEvent
  | EgressEvent
  | LimitEvent
  | DenialEvent
  | RestartEvent
  | EngineBuildingEvent
  | EngineBuiltEvent
  | PackagesMissingEvent
  | IntegrityEvent
  | CacheEvictedEvent;
export type SandboxEventListener = (event: SandboxEvent) => void;

/** Distributive Omit, so each member keeps its own fields. */
export type EventInput = SandboxEvent extends infer E ? (E extends SandboxEvent ? Omit<E, "time"> : never) : never;

/** Wraps the caller's listener: stamps the time, and a listener that throws never breaks a run. */
export function eventSink(listener: SandboxEventListener | undefined): ((event: EventInput) => void) | undefined {
  if (!listener) return undefined;
  return (event) => {
    try {
      listener({ ...event, time: Date.now() });
    } catch {
      // The listener's failure is the application's; the run carries on.
    }
  };
}

/**
 * The events a finished run tells by its result: the limit that ended or cut it, a denial, and (with
 * `restarts`, for engines that do not report their own) an engine that was replaced under it. Read from
 * the host's verdict (the error kind), never from guest text.
 */
export function resultEvents(
  result: RunResult,
  limits: Limits,
  emit: (event: EventInput) => void,
  restarts = true,
): void {
  const engine = result.stats.engine;
  if (result.outputTruncated) emit({ type: "limit", engine, limit: "maxOutputBytes", value: limits.maxOutputBytes });
  if (result.ok) return;
  const kind = result.error.kind;
  // The limit the host saw fire (limitOf: a Pyodide stack verdict is no `maxStackKb`; an output
  // verdict names its cap).
  const limit = limitOf(result.error, engine);
  if (limit) emit({ type: "limit", engine, limit, value: limits[limit] });
  if (kind === "denied") emit({ type: "denied", engine, message: result.error.message.slice(0, 500) });
  if (restarts && (kind === "crashed" || (ENGINE_INFO[engine].runsIn === "process" && kind === "timeout")))
    emit({ type: "restart", engine, reason: kind === "timeout" ? "killed at the deadline" : "the engine crashed" });
}
