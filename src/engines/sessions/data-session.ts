// A session's life, once for every engine: a session is live (its state in a place the backend
// knows: a QuickJS module instance, a Pyodide sidecar, a native process), stored (an authenticated
// snapshot in the session store), or lost (its place died, or the engine ended it). The backends
// (backend.ts) only open, save, load, fork and close a live state; everything else is here:
//
// - run(): one step at a time, in order; a stored session is loaded first (opened, checked and proven
//   as a resume would be), a lost one answers with why.
// - idle → evict: after `sessions.idleMs` with no run the state is saved, sealed (blob.ts) into the
//   store and its place given back. A save refused for the session's size or state (an open file, a C
//   extension, over sessions.maxSnapshotBytes) is said once (`session.evicted` with the error) and not
//   tried again until the session has run again. A backend that cannot save at all ends an idle session.
// - snapshot(): the state, sealed; the session carries on. fork(): a copy, made where the state lives
//   when the backend can, else saved and loaded (it never leaves the process either way).
// - pin() / end(why): what an engine that needs a session's place back may do with one that cannot move
//   (the Pyodide pool's policy, pyodide/holders.ts): keep its place for it outside the pool, or end it.
// Events: `session.snapshot`, `session.resume`, `session.evicted`, `session.ended`, from this file only.

import { randomBytes } from "node:crypto";
import { ClosedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import type { EventInput } from "../../core/events.ts";
import { ENGINE_INFO, type EngineName, type Language, type RunResult } from "../../core/types.ts";
import { failedRun, sessionLost } from "../../kit/failures.ts";
import { Serial } from "../../kit/serial.ts";
import { traceSession } from "../../kit/trace.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import type { SessionStore } from "../../stores/store.ts";
import type { EngineSession } from "../engine.ts";
import { isSaved, type LiveState, type SavedState, type StateBackend } from "./backend.ts";
import { openSnapshot, sealSnapshot, type SnapshotHeader } from "./snapshot.ts";

type SessionEventType = "session.snapshot" | "session.resume" | "session.evicted" | "session.ended";

/** What every session of one engine shares (keeper.ts makes it). */
export interface SessionHost<L extends LiveState> {
  readonly backend: StateBackend<L>;
  readonly key: Uint8Array;
  readonly maxSnapshotBytes: number;
  readonly idleMs: number | false;
  readonly store: SessionStore;
  readonly emit: ((event: EventInput) => void) | undefined;
  /** The header a snapshot of this engine carries, for `language`. */
  header(language: Language): Promise<Omit<SnapshotHeader, "createdAt">>;
  /** The session holds a live state and is idle (true), or stops being so (false). */
  idle(session: DataSession<L>, idle: boolean): void;
  /**
   * A live state made into a new session of this engine: a fork's copy or a resume (`resumed`: the
   * bytes it came from and when loading began, for its `session.resume` event).
   */
  adopt(live: L, language: Language, resumed?: { bytes: number; t0: number }): DataSession<L>;
  closed(session: DataSession<L>): void;
}

export class DataSession<L extends LiveState = LiveState> implements EngineSession {
  readonly id = randomBytes(16).toString("hex");
  readonly #host: SessionHost<L>;
  #live: L | undefined;
  /** The state is in the store under `id` (evicted), not live. */
  #stored = false;
  #lost: string | undefined;
  /** Why the last eviction was refused for the session's size or state; cleared by its next run. */
  #unmovable: string | undefined;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #queue = new Serial();
  /** Steps queued or running. */
  #queued = 0;
  /** The language its snapshots say (the front door tells it; an evicted session needs none). */
  #language: Language;
  /** performance.now() of the last step's end (the order an engine takes places back in). */
  lastUsed = performance.now();

  constructor(host: SessionHost<L>, live: L | undefined, language: Language, resumed?: { bytes: number; t0: number }) {
    this.#host = host;
    this.#live = live;
    this.#language = language;
    if (resumed) this.#emit("session.resume", resumed.bytes, performance.now() - resumed.t0);
    if (live) this.#becomeIdle();
  }

  get #engine(): EngineName {
    return this.#host.backend.engine;
  }

  /** Whether the state is live now rather than stored (tests and the bench look). */
  get resident(): boolean {
    return this.#live !== undefined;
  }

  /** The live state, if any (an engine's policy reads where it lives). */
  get live(): L | undefined {
    return this.#live;
  }

  /** Why this session's state cannot leave its place (its last eviction was refused), if it cannot. */
  get unmovable(): string | undefined {
    return this.#unmovable;
  }

  /** True while steps are queued or running. */
  get busy(): boolean {
    return this.#queued > 0;
  }

  #emit(type: SessionEventType, bytes: number, ms: number, error?: string): void {
    traceSession(type, this.#engine, bytes, ms, error !== undefined);
    this.#host.emit?.({ type, engine: this.#engine, session: this.id, bytes, ms, ...(error ? { error } : {}) });
  }

  /**
   * The one-at-a-time queue. The last step queued ends by making the session idle, inside the step:
   * decided after the step's promise settled, a caller answering that promise with its next run would be
   * marked idle with that run queued, and its place could be taken between the two.
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
    const live = this.#live;
    if (this.#closed || !live) return;
    if (live.lost !== undefined) {
      // Its place died under a run: given back now, not when the session next runs.
      this.#lose(live, live.lost);
      return;
    }
    this.lastUsed = performance.now();
    this.#host.idle(this, true);
    const ms = this.#host.idleMs;
    // Refused once already: not again until a run may have changed what refused it.
    if (ms !== false && this.#unmovable === undefined) {
      this.#timer = setTimeout(() => void this.#onIdle().catch(() => undefined), ms);
      this.#timer.unref();
    }
  }

  /** Idle for `sessions.idleMs`: evicted, or ended where the state cannot be saved at all. */
  #onIdle(): Promise<boolean> {
    if (this.#host.backend.save) return this.evict();
    return this.end(`it was idle for ${String(this.#host.idleMs)} ms (sessions.idleMs) and its state cannot be stored`);
  }

  #lose(live: L, why: string): void {
    this.#live = undefined;
    this.#lost = why;
    live.close("lost").catch(() => undefined);
  }

  /** The live state, loaded from the store when the session was evicted; undefined when it is gone. */
  async #ensure(signal?: AbortSignal): Promise<L | undefined> {
    const current = this.#live;
    if (current && current.lost !== undefined) this.#lose(current, current.lost);
    if (this.#live || this.#lost !== undefined) return this.#live;
    const { backend } = this.#host;
    if (!this.#stored) return (this.#live = await backend.open(signal));
    const t0 = performance.now();
    const blob = await this.#host.store.get(this.id);
    if (!blob) {
      this.#lost = "its snapshot is no longer in the session store";
      return undefined;
    }
    try {
      if (!backend.load) throw new TypeError(`the ${this.#engine} engine does not load sessions`);
      const expected = await this.#host.header(this.#language);
      const { header, state } = openSnapshot(this.#host.key, blob, this.#host.maxSnapshotBytes, expected);
      // The session carrying on after its eviction: its random sequence too (no reseed).
      const saved: SavedState = header.base === undefined ? { state } : { state, base: header.base };
      this.#live = await backend.load(saved, { reseed: false }, signal);
    } catch (error) {
      this.#lost = `it could not be resumed from the store: ${(error as Error).message}`;
      return undefined;
    }
    this.#stored = false;
    await this.#host.store.delete(this.id);
    this.#emit("session.resume", blob.length, performance.now() - t0);
    return this.#live;
  }

  run(request: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) return Promise.reject(new ClosedError("session"));
    // The run may close the file or drop the data that kept the state in place: eviction may be tried again.
    this.#unmovable = undefined;
    return this.#serial(async () => {
      const live = await this.#ensure(request.signal);
      if (!live)
        return failedRun(this.#engine, request, sessionLost(this.#lost ?? "its state is gone"), performance.now());
      return live.run(request);
    });
  }

  /** The state as bytes (for snapshot and fork), or SnapshotUnsupportedError saying why there are none. */
  async #save(): Promise<SavedState> {
    const { backend } = this.#host;
    if (!backend.save) throw cannotLeave(this.#engine);
    const live = await this.#ensure();
    if (!live) throw new SnapshotUnsupportedError("state", this.#lost ?? "this session's state is gone");
    const saved = await backend.save(live);
    if (isSaved(saved)) return saved;
    if (saved.lost) this.#lose(live, `its interpreter stopped while it was saved: ${saved.refused}`);
    throw new SnapshotUnsupportedError(saved.reason ?? "state", saved.refused);
  }

  #sealWith(saved: SavedState, header: Omit<SnapshotHeader, "createdAt">): Uint8Array {
    const full = { ...header, ...(saved.base === undefined ? {} : { base: saved.base }), createdAt: Date.now() };
    return sealSnapshot(this.#host.key, full, saved.state, this.#host.maxSnapshotBytes);
  }

  /** An authenticated snapshot of the session; it carries on, unchanged. */
  async snapshot(language?: Language): Promise<Uint8Array> {
    if (this.#closed) throw new ClosedError("session");
    if (language) this.#language = language;
    if (!this.#host.backend.save) throw cannotLeave(this.#engine);
    const header = await this.#host.header(this.#language);
    return this.#serial(async () => {
      const t0 = performance.now();
      const blob = this.#sealWith(await this.#save(), header);
      this.#emit("session.snapshot", blob.length, performance.now() - t0);
      return blob;
    });
  }

  /** A new session holding a copy of this one's state, independent from here on. */
  async fork(): Promise<DataSession<L>> {
    if (this.#closed) throw new ClosedError("session");
    const { backend } = this.#host;
    if (!backend.fork && !(backend.save && backend.load)) throw cannotLeave(this.#engine);
    const t0 = performance.now();
    const made = await this.#serial(async (): Promise<{ live: L } | { saved: SavedState }> => {
      const live = await this.#ensure();
      if (!live) throw new SnapshotUnsupportedError("state", this.#lost ?? "this session's state is gone");
      // A fork made where the session lives never becomes bytes: its events say 0 bytes.
      if (backend.fork) {
        this.#emit("session.snapshot", 0, performance.now() - t0);
        return { live: await backend.fork(live) };
      }
      const saved = await this.#save();
      this.#emit("session.snapshot", saved.state.length, performance.now() - t0);
      return { saved };
    });
    // Loaded after this session's step ended: the copy may need this session's place (a pool of one
    // sidecar), which an engine can take back only from a session that is idle.
    // A copy draws its own random seed: it and this session cannot predict each other's draws.
    const live = "live" in made ? made.live : await backend.load!(made.saved, { reseed: true });
    const bytes = "saved" in made ? made.saved.state.length : 0;
    return this.#host.adopt(live, this.#language, { bytes, t0 });
  }

  /**
   * Sends the state to the store and gives its place back; false when nothing was live, or the state
   * cannot leave (said once, and not tried again until the session runs).
   */
  evict(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return this.#serial(async () => {
      const live = this.#live;
      const { backend } = this.#host;
      if (!live || this.#closed || live.lost !== undefined || !backend.save) return false;
      const t0 = performance.now();
      const saved = await backend.save(live);
      if (!isSaved(saved)) {
        if (!saved.lost) return this.#refused(saved.refused, t0);
        this.#emit("session.evicted", 0, performance.now() - t0, saved.refused);
        this.#lose(live, `its interpreter stopped while it was saved: ${saved.refused}`);
        return false;
      }
      let blob: Uint8Array;
      try {
        blob = this.#sealWith(saved, await this.#host.header(this.#language));
      } catch (error) {
        // Over the cap: stored, it would be refused by its own resume and the session lost. It stays.
        if (!(error instanceof SnapshotUnsupportedError)) throw error;
        return this.#refused(error.message, t0);
      }
      await this.#host.store.put(this.id, blob);
      this.#stored = true;
      this.#live = undefined;
      await live.close("evicted");
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
   * Whether an engine may keep this session's place for it alone now: it cannot move, it is between
   * runs with nothing queued, and its place is alive. The engine then takes the place (`live`).
   */
  get pinnable(): boolean {
    const live = this.#live;
    return !this.#closed && this.#queued === 0 && this.#unmovable !== undefined && !!live && live.lost === undefined;
  }

  /**
   * Ends a session to give its place back: its state is gone, and its next run says `why`. False when
   * it ran since it was chosen (it may move now: only a session that cannot move, or one whose backend
   * cannot save, is ended) or holds no place.
   */
  end(why: string): Promise<boolean> {
    const movable = () => this.#unmovable === undefined && this.#host.backend.save !== undefined;
    if (this.#closed || movable()) return Promise.resolve(false);
    return this.#serial(async () => {
      const live = this.#live;
      if (movable() || !live || live.lost !== undefined) return false;
      const t0 = performance.now();
      this.#live = undefined;
      this.#lost = why;
      await live.close("ended");
      this.#emit("session.ended", 0, performance.now() - t0, why);
      return true;
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unidle();
    this.#host.closed(this);
    await this.#queue.idle();
    const live = this.#live;
    this.#live = undefined;
    await live?.close("closed");
    if (this.#stored) await this.#host.store.delete(this.id);
  }
}

/** Why an engine's sessions cannot be snapshotted, forked or resumed (ENGINE_INFO's `snapshots`). */
export function cannotLeave(engine: EngineName): SnapshotUnsupportedError {
  return ENGINE_INFO[engine].runsIn === "process" && !ENGINE_INFO[engine].snapshots
    ? new SnapshotUnsupportedError(
        "native",
        `a ${engine} session is a live process (its state is the process, not data): it cannot be snapshotted, forked or resumed; use an engine whose sessions snapshot for that`,
      )
    : new SnapshotUnsupportedError("engine", `the ${engine} engine's sessions cannot be snapshotted`);
}
