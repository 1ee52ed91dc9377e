// Where a Python session's state lives on Pyodide, and how it moves (the session's life is
// engines/sessions/data-session.ts, the same for every engine):
//
// - Open is lazy: a new session *is* the checkpoint every pool sidecar already holds, so its first run
//   takes an idle pool sidecar (started from the engine's boot image) and runs with `keep` (no reset
//   afterwards): no sidecar boot.
// - Save: the sidecar writes the state as a record relative to its checkpoint (sidecar/record.ts). A
//   state that cannot leave (an open file, a loaded C extension, a cold-started sidecar whose hash seed
//   is its own) is refused, and the session keeps its sidecar.
// - Load: a pristine pool sidecar started from the record's checkpoint loads it and proves it; a
//   refusal retires that sidecar (nothing half-loaded is served).
// - Giving a sidecar back: it resets to its checkpoint and proves it, exactly as after a stateless run,
//   before the pool hands it to anyone else (or, pinned outside the pool, it is killed: holders.ts).

import { SnapshotRejectedError } from "../../core/errors.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import type { RunResult } from "../../core/types.ts";
import type { LiveState, SavedState, SaveRefused, StateBackend } from "../sessions/backend.ts";
import type { SnapshotHeader } from "../sessions/snapshot.ts";
import type { SidecarProcess } from "./sidecar-client.ts";

/** Why a session on a cold-started sidecar is never stored (SnapshotUnsupportedError "checkpoint"). */
export const COLD_SIDECAR =
  "this session runs on a sidecar started without the engine snapshot (python.snapshot is false, or the snapshot was still being built when the session opened): its state is relative to that one interpreter (its own hash seed), so no other sidecar could resume it, and it stays where it is";

/** What the backend needs of the engine: its pool, and the resets it waits for before closing. */
export interface SidecarHost {
  /**
   * A pristine pool sidecar; with `base`, one started from that engine checkpoint (a record loads only
   * there), else SnapshotRejectedError("checkpoint").
   */
  acquire(signal?: AbortSignal, base?: string): Promise<SidecarProcess>;
  release(sidecar: SidecarProcess, reusable: boolean): void;
  /** A reset that may finish after a session closed, which the engine waits for before its pool closes. */
  settling(reset: Promise<void>): void;
  /** What a snapshot of this engine says it is (its engine, version and lock). */
  header(): Promise<Omit<SnapshotHeader, "createdAt">>;
  /** The most a record may inflate to inside a sidecar. */
  maxStateBytes: number;
  /**
   * A sidecar's process memory cap (what a save or load is measured against before it is done:
   * sidecar/budget.ts), and the WASM memory a run may have here (limits.memoryMb): a session larger
   * than that is refused (`size`) by the sidecar asked to load it.
   */
  capBytes: number;
  memoryBytes: number;
}

/** A session's state in a sidecar. */
export class SidecarState implements LiveState {
  readonly sidecar: SidecarProcess;
  readonly #host: SidecarHost;

  constructor(sidecar: SidecarProcess, host: SidecarHost) {
    this.sidecar = sidecar;
    this.#host = host;
  }

  run(request: ResolvedRequest): Promise<RunResult> {
    return this.sidecar.run(request, true).result;
  }

  get lost(): string | undefined {
    return this.sidecar.alive && this.sidecar.idle
      ? undefined
      : "its interpreter was stopped by an earlier timeout or crash";
  }

  async close(why: "evicted" | "closed" | "ended" | "lost"): Promise<void> {
    const sidecar = this.sidecar;
    if (why === "lost" || !sidecar.alive) {
      this.#host.release(sidecar, false);
      return;
    }
    const reset = sidecar.end().then((reusable) => this.#host.release(sidecar, reusable));
    // A closed session's reset runs after close resolves, as a stateless run's does after its result:
    // the pool hands the sidecar out only once it is proven, and the engine's close waits for it.
    if (why === "closed") this.#host.settling(reset);
    else await reset;
  }
}

export class PyodideBackend implements StateBackend<SidecarState> {
  readonly engine = "pyodide" as const;
  readonly lazy = true;
  readonly #host: SidecarHost;

  constructor(host: SidecarHost) {
    this.#host = host;
  }

  async open(signal?: AbortSignal): Promise<SidecarState> {
    return new SidecarState(await this.#host.acquire(signal), this.#host);
  }

  async header(): Promise<Omit<SnapshotHeader, "createdAt" | "language">> {
    const { language: _language, ...header } = await this.#host.header();
    return header;
  }

  async save(live: SidecarState): Promise<SavedState | SaveRefused> {
    const { sidecar } = live;
    const base = sidecar.base;
    if (base === undefined) return { refused: COLD_SIDECAR, lost: false, reason: "checkpoint" };
    const answer = await sidecar.save(this.#host.maxStateBytes, this.#host.capBytes);
    if (!answer.ok)
      return {
        refused: `this session cannot be snapshotted: ${answer.refused}`,
        lost: answer.retired,
        ...(answer.size ? { reason: "size" as const } : {}),
      };
    return { state: answer.record!, base };
  }

  async load(saved: SavedState, options: { reseed: boolean }, signal?: AbortSignal): Promise<SidecarState> {
    // Nothing has reached a sidecar yet: a refusal of the checkpoint leaves the pool as it was.
    const sidecar = await this.#host.acquire(signal, saved.base);
    const { capBytes, memoryBytes } = this.#host;
    const answer = await sidecar.load(saved.state, this.#host.maxStateBytes, options.reseed, { capBytes, memoryBytes });
    if (answer.ok) return new SidecarState(sidecar, this.#host);
    // Refused before any of it reached the interpreter: the sidecar goes back to the pool as it came.
    this.#host.release(sidecar, !answer.retired && sidecar.alive);
    if (answer.size) throw new SnapshotRejectedError("size", answer.refused);
    if (/^the memory could not grow/.test(answer.refused))
      throw new SnapshotRejectedError("size", `${answer.refused}: more memory than an interpreter here can grow to`);
    const reason = /another engine checkpoint/.test(answer.refused) ? "checkpoint" : "corrupt";
    throw new SnapshotRejectedError(reason, answer.refused);
  }
}
