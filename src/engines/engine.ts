// The one narrow interface every engine implements. The front door (sandbox.ts) validates and
// resolves a request, picks an engine, and hands it a `ResolvedRequest`; the engine returns a
// `RunResult`. Engines never throw for guest failures: those are results.

import type { ResolvedOptions, ResolvedRequest } from "../options/index.ts";
import type { SnapshotHeader } from "./sessions/snapshot.ts";
import type { EngineName, Language, ResumeOptions, RunResult } from "../core/types.ts";

export interface Engine {
  readonly name: EngineName;
  /**
   * The engine tells the event channel of every process, thread or module it replaces, once each, so
   * the front door does not also infer a restart from each `crashed` result (a lost thread can crash
   * several runs). Absent: the front door infers them.
   */
  readonly reportsRestarts?: boolean;
  /** Runs code in fresh state: nothing from an earlier run is visible. */
  run(request: ResolvedRequest): Promise<RunResult>;
  /**
   * Opens a stateful session: one interpreter kept alive across runs, on purpose (multi-turn agents).
   * Engines that cannot keep state leave this out.
   */
  openSession?(): Promise<EngineSession>;
  /** What a snapshot of this engine's sessions says it is (engines that snapshot sessions only). */
  snapshotHeader?(): Promise<Omit<SnapshotHeader, "createdAt">>;
  /**
   * A live session from an authenticated snapshot's state whose header matched `snapshotHeader()`:
   * loaded and proven before it resolves; on failure nothing of it remains (SnapshotRejectedError).
   */
  resumeSession?(
    state: Uint8Array,
    bytes: number,
    header: SnapshotHeader,
    options: ResumeOptions,
  ): Promise<EngineSession>;
  /** Waits for in-flight runs, then frees everything. */
  close(): Promise<void>;
  /** Frees everything now; in-flight runs end as `crashed`/`aborted`. */
  destroy(): Promise<void>;
}

export interface EngineSession {
  run(request: ResolvedRequest): Promise<RunResult>;
  /**
   * An authenticated snapshot of the session (src/engines/sessions/snapshot.ts); absent: it cannot be taken.
   * `language`: the session's, for the header (an engine of one language ignores it).
   */
  snapshot?(language?: Language): Promise<Uint8Array>;
  /** A new, independent session holding a copy of this one's state. */
  fork?(): Promise<EngineSession>;
  close(): Promise<void>;
}

/** How an engine module is loaded: lazily, so the package root pulls in nothing an edge runtime lacks. */
export type EngineFactory = (options: ResolvedOptions) => Promise<Engine>;
