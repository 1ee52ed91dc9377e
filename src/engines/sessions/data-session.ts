// JavaScript sessions as data, on the host: a session is either live (a QuickJS state in a module
// instance of its own, in a worker thread or in-process) or stored (an authenticated snapshot in the
// session store). The engines below only know how to take a live session's state as bytes and how to
// make a live session from such bytes (a `StateBackend`); everything else is here, for both engines:
//
// - snapshot(): the state, sealed (engines/sessions/blob.ts) under `sessions.key`; the session carries on.
// - fork(): the state, unsealed (it never leaves the process), made into a second live session.
// - eviction: after `sessions.idleMs` with no run the state is sealed into the store and the live
//   session (its module instance, its memory) is closed; the next run opens the blob, checks it as a
//   resume would, and makes it live again, wherever the backend puts it. An eviction refused for the
//   state's size or content is said once and not tried again until the session runs again (a refused
//   save is the whole state taken, compressed and thrown away).
// - resume: sandbox.resume hands the authenticated state here (resumeSession).
// Events: `session.snapshot`, `session.resume`, `session.evicted`, as the Python engine emits them.

import { randomBytes } from "node:crypto";
import { ClosedError, SnapshotUnsupportedError } from "../../core/errors.ts";
import type { EventInput } from "../../core/events.ts";
import type { ResolvedOptions, ResolvedRequest } from "../../options/index.ts";
import { openSnapshot, sealSnapshot, type SnapshotHeader } from "./blob.ts";
import { MemorySessionStore } from "../../stores/memory.ts";
import type { SessionStore } from "../../stores/store.ts";
import type { Language, RunResult } from "../../core/types.ts";
import type { Engine, EngineSession } from "../engine.ts";
import { failedRun, sessionLost } from "../../kit/failures.ts";
import { Serial } from "../../kit/serial.ts";

/** A live session whose state can be taken (the engines' sessions). */
export interface LiveSession extends EngineSession {
  /** The session's state as (unsealed) bytes, between runs. */
  save(): Promise<Uint8Array>;
}

/** What an engine provides for its sessions to be data. */
export interface StateBackend {
  open(): Promise<LiveSession>;
  /** A live session from state bytes; SnapshotRejectedError (nothing kept) when they do not load. */
  load(state: Uint8Array): Promise<LiveSession>;
  /** A copy of a live session made where it lives (no bytes, no compression); absent: save + load. */
  fork?(live: LiveSession): Promise<LiveSession>;
  /** What the state is made by and against (the build digest is the lock). */
  header: Omit<SnapshotHeader, "createdAt" | "language">;
}

type SessionEventType = "session.snapshot" | "session.resume" | "session.evicted";

interface Host {
  backend: StateBackend;
  key: Uint8Array;
  maxSnapshotBytes: number;
  idleMs: number | false;
  store: SessionStore;
  emit: ((event: EventInput) => void) | undefined;
  sessions: Set<DataSession>;
}

export class DataSession implements EngineSession {
  readonly id = randomBytes(16).toString("hex");
  readonly #host: Host;
  #live: LiveSession | undefined;
  #stored = false;
  #lost: string | undefined;
  /** The last eviction was refused (size, state): no timer until the next run may have changed that. */
  #unmovable = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #serial = new Serial();
  /** The language its snapshots say (the front door tells it; an evicted session needs none). */
  #language: Language = "javascript";

  constructor(host: Host, live: LiveSession) {
    this.#host = host;
    this.#live = live;
    host.sessions.add(this);
    this.#idleLater();
  }

  /** Whether the state is live now rather than in the store (tests and the bench look). */
  get resident(): boolean {
    return this.#live !== undefined;
  }

  #emit(type: SessionEventType, bytes: number, ms: number, error?: string): void {
    this.#host.emit?.({ type, engine: "quickjs", session: this.id, bytes, ms, ...(error ? { error } : {}) });
  }

  #header(): Omit<SnapshotHeader, "createdAt"> {
    return { ...this.#host.backend.header, language: this.#language };
  }

  #idleLater(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const ms = this.#host.idleMs;
    if (ms === false || this.#closed || !this.#live || this.#unmovable) return;
    this.#timer = setTimeout(() => void this.evict().catch(() => undefined), ms);
    this.#timer.unref();
  }

  #step<T>(work: () => Promise<T>): Promise<T> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.#serial.run(work);
    next.then(
      () => this.#idleLater(),
      () => this.#idleLater(),
    );
    return next;
  }

  /** The live session, resumed from the store when it was evicted; undefined when its state is gone. */
  async #ensure(): Promise<LiveSession | undefined> {
    if (this.#live || this.#lost !== undefined) return this.#live;
    const t0 = performance.now();
    const blob = await this.#host.store.get(this.id);
    if (!blob) {
      this.#lost = "its snapshot is no longer in the session store";
      return undefined;
    }
    try {
      const { state } = openSnapshot(this.#host.key, blob, this.#host.maxSnapshotBytes, this.#header());
      this.#live = await this.#host.backend.load(state);
    } catch (error) {
      this.#lost = `it could not be resumed from the store: ${(error as Error).message}`;
      return undefined;
    }
    this.#stored = false;
    await this.#host.store.delete(this.id);
    this.#emit("session.resume", blob.length, performance.now() - t0);
    return this.#live;
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    if (this.#closed) return Promise.reject(new ClosedError("session"));
    this.#unmovable = false;
    return this.#step(async () => {
      const live = await this.#ensure();
      if (!live) return failedRun("quickjs", req, sessionLost(this.#lost ?? "its state is gone"), performance.now());
      return live.run(req);
    });
  }

  async #state(): Promise<Uint8Array> {
    const live = await this.#ensure();
    if (!live) throw new ClosedError("session");
    return live.save();
  }

  async snapshot(language?: Language): Promise<Uint8Array> {
    if (this.#closed) throw new ClosedError("session");
    if (language) this.#language = language;
    return this.#step(async () => {
      const t0 = performance.now();
      const header = { ...this.#header(), createdAt: Date.now() };
      const blob = sealSnapshot(this.#host.key, header, await this.#state(), this.#host.maxSnapshotBytes);
      this.#emit("session.snapshot", blob.length, performance.now() - t0);
      return blob;
    });
  }

  async fork(): Promise<EngineSession> {
    if (this.#closed) throw new ClosedError("session");
    const { backend } = this.#host;
    const t0 = performance.now();
    const made = await this.#step(async () => {
      const live = await this.#ensure();
      if (!live) throw new ClosedError("session");
      // A fork made where the session lives never becomes bytes: its events say 0 bytes.
      if (backend.fork) {
        this.#emit("session.snapshot", 0, performance.now() - t0);
        return { live: await backend.fork(live), bytes: 0 };
      }
      const state = await live.save();
      this.#emit("session.snapshot", state.length, performance.now() - t0);
      return { live: await backend.load(state), bytes: state.length };
    });
    const copy = new DataSession(this.#host, made.live);
    copy.#language = this.#language;
    copy.#emit("session.resume", made.bytes, performance.now() - t0);
    return copy;
  }

  /** Sends the state to the store and closes the live session; false when there was nothing live. */
  evict(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    return this.#serial.run(async () => {
      const live = this.#live;
      if (!live || this.#closed) return false;
      const t0 = performance.now();
      let state: Uint8Array;
      try {
        state = await live.save();
      } catch (error) {
        // It stays live where it is (as a Python session that cannot move keeps its sidecar).
        return this.#refused((error as Error).message, t0);
      }
      let blob: Uint8Array;
      try {
        blob = sealSnapshot(
          this.#host.key,
          { ...this.#header(), createdAt: Date.now() },
          state,
          this.#host.maxSnapshotBytes,
        );
      } catch (error) {
        // Over the cap: stored, it would be refused by its own resume and the session lost. It stays.
        if (!(error instanceof SnapshotUnsupportedError)) throw error;
        return this.#refused(error.message, t0);
      }
      await this.#host.store.put(this.id, blob);
      this.#stored = true;
      this.#live = undefined;
      await live.close();
      this.#emit("session.evicted", blob.length, performance.now() - t0);
      return true;
    });
  }

  /** An eviction refused for the state's size or content: said once, not tried again until it runs. */
  #refused(why: string, t0: number): false {
    this.#unmovable = true;
    this.#emit("session.evicted", 0, performance.now() - t0, why);
    return false;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#host.sessions.delete(this);
    await this.#serial.idle();
    const live = this.#live;
    this.#live = undefined;
    await live?.close();
    if (this.#stored) await this.#host.store.delete(this.id);
  }
}

/** An engine whose sessions are DataSessions over `backend`; runs and the rest go to `inner`. */
export class SnapshotEngine implements Engine {
  readonly name = "quickjs" as const;
  readonly reportsRestarts: boolean;
  readonly inner: Engine;
  readonly #host: Host;
  readonly #ownStore: boolean;

  constructor(inner: Engine, backend: StateBackend, options: ResolvedOptions) {
    this.inner = inner;
    this.reportsRestarts = inner.reportsRestarts === true;
    const s = options.sessions;
    this.#ownStore = s.store === undefined;
    this.#host = {
      backend,
      key: s.key,
      maxSnapshotBytes: s.maxSnapshotBytes,
      idleMs: s.idleMs,
      store: s.store ?? new MemorySessionStore(),
      emit: options.emit,
      sessions: new Set(),
    };
  }

  /** Open sessions, live or stored (tests look: nothing may leak). */
  get sessions(): ReadonlySet<DataSession> {
    return this.#host.sessions;
  }

  get store(): SessionStore {
    return this.#host.store;
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.inner.run(req);
  }

  async openSession(): Promise<DataSession> {
    return new DataSession(this.#host, await this.#host.backend.open());
  }

  snapshotHeader(): Promise<Omit<SnapshotHeader, "createdAt">> {
    return Promise.resolve({ ...this.#host.backend.header, language: "javascript" });
  }

  // ResumeOptions.reseed is not read: Math.random is reseeded on every restore (a guest cannot seed
  // it, so no sequence of the guest's is lost by that).
  async resumeSession(state: Uint8Array, bytes: number): Promise<DataSession> {
    const t0 = performance.now();
    const session = new DataSession(this.#host, await this.#host.backend.load(state));
    this.#host.emit?.({
      type: "session.resume",
      engine: "quickjs",
      session: session.id,
      bytes,
      ms: performance.now() - t0,
    });
    return session;
  }

  async #closeAll(): Promise<void> {
    await Promise.allSettled([...this.#host.sessions].map((s) => s.close()));
    if (this.#ownStore) await this.#host.store.close();
  }

  async close(): Promise<void> {
    await this.#closeAll();
    await this.inner.close();
  }

  async destroy(): Promise<void> {
    await this.inner.destroy();
    await this.#closeAll();
  }
}
