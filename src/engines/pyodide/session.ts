// A Python session on Pyodide: state that lives in a pool sidecar while it is used, and in a store as
// an authenticated snapshot while it is not.
//
// - Open: nothing starts. A new session *is* the checkpoint every pool sidecar already holds, so its
//   first run takes an idle pool sidecar and runs with `keep` (no reset afterwards): no sidecar boot.
// - Held: between runs the session keeps its sidecar, until it is idle for `sessions.idleMs`, another
//   run finds every pool sidecar busy (the least recently used idle session gives its own back), or it
//   closes. Giving it back: the state is saved as a record (sidecar/session-state.ts), sealed
//   (engines/sessions/blob.ts) into the store, and the sidecar resets to its checkpoint and proves it — exactly
//   as after a stateless run — before the pool hands it to anyone else.
// - Next run of an evicted session: a pristine pool sidecar loads the record and proves it.
// A session whose state cannot move (an open file, a loaded C extension, a state over
// sessions.maxSnapshotBytes, a cold-started sidecar) keeps its sidecar; snapshot() then throws
// SnapshotUnsupportedError naming why. Its eviction is refused once, said once (`session.evicted` with
// the error), and not tried again until it has run again: a refused save is the whole state taken
// out, compressed and thrown away. When another run needs its sidecar the engine either takes the
// sidecar out of the pool for it (`pin`) or, past `python.maxPinned`, ends it (`end`).

import { randomBytes } from "node:crypto";
import { ClosedError, SnapshotRejectedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import type { EventInput } from "../../core/events.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import { openSnapshot, sealSnapshot, type SnapshotHeader } from "../sessions/blob.ts";
import type { SessionStore } from "../../stores/store.ts";
import type { Limits, RunResult } from "../../core/types.ts";
import { failedRun, sessionLost } from "../../kit/failures.ts";
import { Serial } from "../../kit/serial.ts";
import type { EngineSession } from "../engine.ts";
import type { ControlAnswer, SidecarProcess } from "./sidecar-client.ts";

/** What a session needs of its engine. */
export interface SessionHost {
  /**
   * A pristine pool sidecar; with `base`, one started from that engine snapshot (a record resumes
   * only there), else SnapshotRejectedError("checkpoint").
   */
  acquire(signal?: AbortSignal, base?: string): Promise<SidecarProcess>;
  release(sidecar: SidecarProcess, reusable: boolean): void;
  /** Takes `sidecar` out of the pool for this session, whose state cannot leave it (see `pin`). */
  pin(session: PyodideSession, sidecar: SidecarProcess): void;
  /** The header a snapshot of this engine carries (its engine, version and lock). */
  header(): Promise<Omit<SnapshotHeader, "createdAt">>;
  key: Uint8Array;
  maxSnapshotBytes: number;
  /** The most a record may inflate to inside a sidecar. */
  maxStateBytes: number;
  idleMs: number | false;
  store: SessionStore;
  limits: Limits;
  emit: ((event: EventInput) => void) | undefined;
  /** Called when the session holds a sidecar and is idle (true) or stops being so (false). */
  idle(session: PyodideSession, idle: boolean): void;
  closed(session: PyodideSession): void;
  /** A closed session's sidecar reset, which the engine waits for before its pool closes. */
  settling(reset: Promise<void>): void;
}

/** Why a session on a cold-started sidecar is never stored (SnapshotUnsupportedError "checkpoint"). */
export const COLD_SIDECAR =
  "this session runs on a sidecar started without the engine snapshot (python.snapshot is false, or the snapshot was still being built when the session opened): its state is relative to that one interpreter (its own hash seed), so no other sidecar could resume it, and it stays where it is";

type SessionEventType = "session.snapshot" | "session.resume" | "session.evicted" | "session.ended";

/** A record and the engine snapshot (sha256) it is relative to. */
export interface SessionRecord {
  record: Uint8Array;
  base: string;
}

function lost(why: string): RunResult {
  return failedRun("pyodide", { language: "python" }, sessionLost(why), performance.now());
}

export class PyodideSession implements EngineSession {
  readonly id = randomBytes(16).toString("hex");
  readonly #host: SessionHost;
  #sidecar: SidecarProcess | undefined;
  /** The state is in the store under `id` (evicted), not in a sidecar. */
  #stored = false;
  #lostReason: string | undefined;
  /** Why the last eviction was refused for the session's size or state; cleared by its next run. */
  #unmovable: string | undefined;
  readonly #queue = new Serial();
  /** Steps queued or running. */
  #queued = 0;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** performance.now() of the last run's end (the eviction order). */
  lastUsed = performance.now();

  readonly #fork: (session: PyodideSession) => Promise<PyodideSession>;

  constructor(host: SessionHost, fork: (session: PyodideSession) => Promise<PyodideSession>) {
    this.#host = host;
    this.#fork = fork;
  }

  /** A new session holding a copy of this one's state (the copy never leaves this process). */
  fork(): Promise<PyodideSession> {
    if (this.#closed) return Promise.reject(new ClosedError("session"));
    return this.#fork(this);
  }

  /** Whether the session holds a sidecar now (tests and the bench look). */
  get resident(): boolean {
    return this.#sidecar !== undefined;
  }

  /** Why this session's state cannot leave its sidecar (its last eviction was refused), if it cannot. */
  get unmovable(): string | undefined {
    return this.#unmovable;
  }

  /**
   * The session's one-at-a-time queue. The last step queued ends by making the session idle, inside the
   * step: decided after the step's promise settled (as before), a caller answering that promise with its
   * next run was marked busy and then idle again with that run queued, so its sidecar could be taken
   * for an eviction between the two; and a step with another queued behind it never makes it idle.
   */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    this.#unidle();
    this.#queued++;
    return this.#queue.run(async () => {
      try {
        return await work();
      } finally {
        if (--this.#queued === 0) this.#becomeIdle();
      }
    });
  }

  #unidle(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#host.idle(this, false);
  }

  #becomeIdle(): void {
    if (this.#closed || !this.#sidecar) return;
    if (!this.#sidecar.alive) {
      // Killed by a timeout or crash: its pool slot goes back now, not when the session next runs.
      this.#host.release(this.#sidecar, false);
      this.#sidecar = undefined;
      this.#lostReason =
        "this session's interpreter was stopped by an earlier timeout or crash; its state is gone. Open a new session";
      return;
    }
    this.lastUsed = performance.now();
    this.#host.idle(this, true);
    const ms = this.#host.idleMs;
    // Refused once already: not again until a run may have changed what refused it.
    if (ms !== false && this.#unmovable === undefined) {
      this.#timer = setTimeout(() => void this.evict().catch(() => undefined), ms);
      this.#timer.unref();
    }
  }

  /** A pristine pool sidecar holding this session's state (loaded from the store when it was evicted). */
  async #ensure(signal?: AbortSignal): Promise<SidecarProcess | undefined> {
    if (this.#sidecar?.alive && this.#sidecar.idle) return this.#sidecar;
    if (this.#sidecar) {
      // Killed by an earlier timeout or crash: its state is gone (as for any session).
      this.#host.release(this.#sidecar, false);
      this.#sidecar = undefined;
      this.#lostReason =
        "this session's interpreter was stopped by an earlier timeout or crash; its state is gone. Open a new session";
    }
    if (this.#lostReason) return undefined;
    if (!this.#stored) return (this.#sidecar = await this.#host.acquire(signal));
    const blob = await this.#host.store.get(this.id);
    if (!blob) {
      this.#lostReason = "this session's snapshot is no longer in the session store";
      return undefined;
    }
    const t0 = performance.now();
    let opened: ReturnType<typeof openSnapshot>;
    try {
      opened = openSnapshot(this.#host.key, blob, this.#host.maxSnapshotBytes, await this.#host.header());
    } catch (error) {
      this.#lostReason = `this session could not be resumed from the store: ${(error as Error).message}`;
      return undefined;
    }
    // Nothing has reached a sidecar yet: a refusal of the checkpoint leaves the pool as it was.
    let sidecar: SidecarProcess;
    try {
      sidecar = await this.#host.acquire(signal, opened.header.base);
    } catch (error) {
      if (!(error instanceof SnapshotRejectedError)) throw error;
      this.#lostReason = `this session could not be resumed from the store: ${error.message}`;
      return undefined;
    }
    try {
      // The session carrying on after its eviction: its `random` sequence too (no reseed).
      await this.#load(sidecar, opened.state, false);
    } catch (error) {
      this.#lostReason = `this session could not be resumed from the store: ${(error as Error).message}`;
      return undefined;
    }
    this.#stored = false;
    await this.#host.store.delete(this.id);
    this.#emit("session.resume", blob.length, performance.now() - t0);
    this.#sidecar = sidecar;
    return sidecar;
  }

  /** Loads a record into `sidecar`, which is given back (retired, on failure: nothing half-loaded stays). */
  async #load(sidecar: SidecarProcess, state: Uint8Array, reseed: boolean): Promise<void> {
    const answer = await sidecar.load(state, this.#host.maxStateBytes, reseed);
    if (answer.ok) return;
    this.#host.release(sidecar, false);
    if (/^the memory could not grow/.test(answer.refused))
      throw new SnapshotRejectedError("size", `${answer.refused}: more memory than an interpreter here can grow to`);
    const reason = /another engine checkpoint/.test(answer.refused) ? "checkpoint" : "corrupt";
    throw new SnapshotRejectedError(reason, answer.refused);
  }

  /**
   * Starts this (new) session from a record: loaded now, so a bad one is refused to the caller now.
   * `base`: the engine snapshot it is relative to (undefined: a record that does not say, checked by
   * the sidecar's digest alone). `reseed`: a copy (a fork, a resume that is not the same session
   * carrying on) draws a new seed for Python's `random`, so copies cannot predict each other's draws.
   */
  async start(state: Uint8Array, base: string | undefined, reseed: boolean): Promise<void> {
    const sidecar = await this.#host.acquire(undefined, base);
    await this.#load(sidecar, state, reseed);
    this.#sidecar = sidecar;
    this.#becomeIdle();
  }

  run(request: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) return Promise.reject(new ClosedError("session"));
    // The run may close the file or drop the data that kept the state in place: eviction may be tried again.
    this.#unmovable = undefined;
    return this.#serial(async () => {
      const sidecar = await this.#ensure(request.signal);
      if (!sidecar) return lost(this.#lostReason ?? "its interpreter is gone");
      return sidecar.run(request, true).result;
    });
  }

  /** The session's state as a raw record (for fork), or a typed error saying why there is none. */
  #saveRecord(): Promise<SessionRecord> {
    return this.#serial(async () => {
      const sidecar = await this.#ensure();
      if (!sidecar) throw new SnapshotUnsupportedError("state", this.#lostReason ?? "this session's state is gone");
      const base = sidecar.base;
      if (base === undefined) throw new SnapshotUnsupportedError("checkpoint", COLD_SIDECAR);
      const answer: ControlAnswer = await sidecar.save(this.#host.maxStateBytes);
      if (!answer.ok) {
        if (answer.retired) {
          this.#host.release(sidecar, false);
          this.#sidecar = undefined;
        }
        throw new SnapshotUnsupportedError("state", `this session cannot be snapshotted: ${answer.refused}`);
      }
      return { record: answer.record!, base };
    });
  }

  /** An authenticated snapshot of the session (it carries on, unchanged). */
  async snapshot(): Promise<Uint8Array> {
    if (this.#closed) throw new ClosedError("session");
    const t0 = performance.now();
    const { record, base } = await this.#saveRecord();
    const header = { ...(await this.#host.header()), base, createdAt: Date.now() };
    const blob = sealSnapshot(this.#host.key, header, record, this.#host.maxSnapshotBytes);
    this.#emit("session.snapshot", blob.length, performance.now() - t0);
    return blob;
  }

  /** The raw record, for a fork in this process (no sealing: it never leaves memory). */
  async record(): Promise<SessionRecord> {
    if (this.#closed) throw new ClosedError("session");
    const t0 = performance.now();
    const saved = await this.#saveRecord();
    this.#emit("session.snapshot", saved.record.length, performance.now() - t0);
    return saved;
  }

  /**
   * Gives the sidecar back: the state goes to the store, the sidecar resets (proven) into the pool.
   * A session whose state cannot move keeps its sidecar (false).
   */
  evict(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return this.#serial(async () => {
      const sidecar = this.#sidecar;
      if (!sidecar) return false;
      const t0 = performance.now();
      if (!sidecar.alive || !sidecar.idle) return false;
      if (sidecar.base === undefined) return this.#refused(COLD_SIDECAR, t0);
      const answer = await sidecar.save(this.#host.maxStateBytes);
      if (!answer.ok) {
        if (!answer.retired) return this.#refused(answer.refused, t0);
        this.#emit("session.evicted", 0, performance.now() - t0, answer.refused);
        this.#host.release(sidecar, false);
        this.#sidecar = undefined;
        this.#lostReason = `this session's interpreter stopped while it was saved: ${answer.refused}`;
        return false;
      }
      let blob: Uint8Array;
      try {
        const header = { ...(await this.#host.header()), base: sidecar.base, createdAt: Date.now() };
        blob = sealSnapshot(this.#host.key, header, answer.record!, this.#host.maxSnapshotBytes);
      } catch (error) {
        // Over the cap: stored, it would be refused by its own resume and the session lost. It stays.
        if (!(error instanceof SnapshotUnsupportedError)) throw error;
        return this.#refused(error.message, t0);
      }
      await this.#host.store.put(this.id, blob);
      this.#stored = true;
      this.#sidecar = undefined;
      this.#host.release(sidecar, await sidecar.end());
      this.#emit("session.evicted", blob.length, performance.now() - t0);
      return true;
    });
  }

  /** An eviction refused for the session's size or state: said once, not tried again until it runs. */
  #refused(why: string, t0: number): false {
    this.#unmovable = why;
    this.#emit("session.evicted", 0, performance.now() - t0, why);
    return false;
  }

  /**
   * Keeps the sidecar of a session that cannot move out of the pool, for this session alone, when
   * another run needs it (the engine decides, within `python.maxPinned`). Only between runs, with
   * nothing queued: false otherwise (it ran since it was chosen, so it may move now).
   */
  pin(): boolean {
    const sidecar = this.#sidecar;
    if (this.#closed || this.#queued > 0 || this.#unmovable === undefined || !sidecar?.alive || !sidecar.idle)
      return false;
    this.#host.pin(this, sidecar);
    return true;
  }

  /**
   * Ends a session that cannot move, to give its sidecar back (the engine's bound on sidecars kept
   * beyond the pool was reached): its state is gone, and its next run says `why`. False when it ran
   * since it was chosen (it may move now) or holds no sidecar.
   */
  end(why: string): Promise<boolean> {
    if (this.#closed || this.#unmovable === undefined) return Promise.resolve(false);
    return this.#serial(async () => {
      const sidecar = this.#sidecar;
      if (this.#unmovable === undefined || !sidecar?.alive || !sidecar.idle) return false;
      const t0 = performance.now();
      this.#sidecar = undefined;
      this.#lostReason = why;
      this.#host.release(sidecar, await sidecar.end());
      this.#emit("session.ended", 0, performance.now() - t0, why);
      return true;
    });
  }

  #emit(type: SessionEventType, bytes: number, ms: number, error?: string) {
    this.#host.emit?.({ type, engine: "pyodide", session: this.id, bytes, ms, ...(error ? { error } : {}) });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unidle();
    this.#host.closed(this);
    await this.#queue.idle();
    const sidecar = this.#sidecar;
    this.#sidecar = undefined;
    // The sidecar's reset (proven) runs after close resolves, as a stateless run's does after its
    // result: the pool hands the sidecar out only once it is done, and the engine's close waits for it.
    if (sidecar) {
      const reset = sidecar.alive ? sidecar.end() : Promise.resolve(false);
      this.#host.settling(reset.then((reusable) => this.#host.release(sidecar, reusable)));
    }
    if (this.#stored) await this.#host.store.delete(this.id);
  }
}
