// What an engine provides for its sessions (data-session.ts owns everything else of a session's life:
// idle → evict, resume on the next run, snapshot, fork, end, close, and the `session.*` events).
//
// A backend knows where a session's state lives while it is live (a QuickJS module instance in a worker
// or on this thread, a Pyodide sidecar, a native process) and, when the engine can, how to take that
// state out as bytes and put bytes back. An engine whose state cannot leave its place (the native tier:
// the state is a process) leaves `save`/`load` out: its sessions are never stored, snapshotted or
// resumed, and an idle one is ended rather than evicted.

import type { ResolvedRequest } from "../../options/index.ts";
import type { EngineName, RunResult } from "../../core/types.ts";
import type { SnapshotHeader } from "./snapshot.ts";

/** A session's state where it lives now. */
export interface LiveState {
  /** Runs a request in this state, which keeps what the run did (a session's run). */
  run(request: ResolvedRequest): Promise<RunResult>;
  /**
   * Why the place this state lived in is gone (a sidecar killed at a deadline), once it is: the state
   * went with it. Undefined while it is alive, and always for a backend whose own `run` says so.
   */
  readonly lost?: string | undefined;
  /**
   * Gives the place back. `why`: `evicted` (the state was saved and stored: the place may be reset,
   * proven and reused), `closed` (the session closed: the same, and it may finish after this resolves,
   * the engine's own close waits for it), `ended` (the engine ended the session to take the place
   * back), `lost` (the place is gone already).
   */
  close(why: "evicted" | "closed" | "ended" | "lost"): Promise<void>;
}

/** A session's state as bytes, and the engine checkpoint it is relative to (where that matters). */
export interface SavedState {
  state: Uint8Array;
  /** The checkpoint (sha256) the state is relative to: it loads only where the engine starts from it. */
  base?: string;
}

/**
 * A save that could not be made: `lost` says whether the state is gone with it (the place died while it
 * was taken) or stays where it is (it cannot leave: an open file, a loaded C extension, too large).
 */
export interface SaveRefused {
  refused: string;
  lost: boolean;
  /** SnapshotUnsupportedError's reason when the caller asked for a snapshot. @defaultValue "state" */
  reason?: "state" | "checkpoint" | "size";
}

export interface StateBackend<L extends LiveState = LiveState> {
  /** The engine its sessions' events and results name. */
  readonly engine: EngineName;
  /**
   * A live state nothing has run in yet. `lazy` backends are asked only when the session's first run
   * needs it (a Pyodide session takes a pool sidecar then); others when the session opens.
   */
  open(signal?: AbortSignal): Promise<L>;
  readonly lazy?: boolean;
  /** The state as bytes, between runs; absent: it never leaves its place. */
  save?(live: L): Promise<SavedState | SaveRefused>;
  /**
   * A live state from bytes (an evicted session coming back, a resume, a fork's copy), proven before it
   * resolves; SnapshotRejectedError naming why (nothing of it kept) when they do not load. `reseed`: a
   * copy draws its own random seed (false: the same session carrying on).
   */
  load?(saved: SavedState, options: { reseed: boolean }, signal?: AbortSignal): Promise<L>;
  /** A copy made where the state lives (no bytes); absent: save + load. */
  fork?(live: L): Promise<L>;
  /** What this engine's snapshots say they are (with `save`/`load` only). */
  header?(): Promise<Omit<SnapshotHeader, "createdAt" | "language">>;
}

/** Whether a save answered with bytes. */
export function isSaved(saved: SavedState | SaveRefused): saved is SavedState {
  return "state" in saved;
}
