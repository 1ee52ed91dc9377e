// One engine's sessions: the options they share (key, store, idle time, snapshot cap, events), the set
// of open ones, and the two ways a session starts: opened (fresh) or resumed (from an authenticated
// snapshot's state, loaded and proven before it resolves). An engine makes one keeper over its backend
// and answers openSession / resumeSession / snapshotHeader / close through it.

import { ClosedError, SnapshotRejectedError } from "../../core/errors.ts";
import type { EventInput } from "../../core/events.ts";
import { ENGINE_INFO, type Language, type ResumeOptions } from "../../core/types.ts";
import type { ResolvedOptions } from "../../options/index.ts";
import { MemorySessionStore } from "../../stores/memory.ts";
import type { SessionStore } from "../../stores/store.ts";
import type { LiveState, StateBackend } from "./backend.ts";
import type { SnapshotHeader } from "./snapshot.ts";
import { cannotLeave, DataSession, type SessionHost } from "./data-session.ts";

/** What an engine's own policy hears of its sessions (the Pyodide pool: who holds a sidecar idle). */
export interface KeeperHooks<L extends LiveState> {
  idle?(session: DataSession<L>, idle: boolean): void;
  closed?(session: DataSession<L>): void;
}

export class SessionKeeper<L extends LiveState> implements SessionHost<L> {
  readonly backend: StateBackend<L>;
  readonly key: Uint8Array;
  readonly maxSnapshotBytes: number;
  readonly idleMs: number | false;
  readonly store: SessionStore;
  readonly emit: ((event: EventInput) => void) | undefined;
  readonly #hooks: KeeperHooks<L>;
  readonly #ownStore: boolean;
  readonly #sessions = new Set<DataSession<L>>();
  #closed = false;

  constructor(backend: StateBackend<L>, options: ResolvedOptions, hooks: KeeperHooks<L> = {}) {
    this.backend = backend;
    const s = options.sessions;
    this.key = s.key;
    this.maxSnapshotBytes = s.maxSnapshotBytes;
    this.idleMs = s.idleMs;
    this.#ownStore = s.store === undefined;
    this.store = s.store ?? new MemorySessionStore();
    this.emit = options.emit;
    this.#hooks = hooks;
  }

  /** Open sessions, live or stored (tests look: nothing may leak). */
  get sessions(): ReadonlySet<DataSession<L>> {
    return this.#sessions;
  }

  async header(language: Language): Promise<Omit<SnapshotHeader, "createdAt">> {
    if (!this.backend.header) throw cannotLeave(this.backend.engine);
    return { ...(await this.backend.header()), language };
  }

  idle(session: DataSession<L>, idle: boolean): void {
    this.#hooks.idle?.(session, idle);
  }

  closed(session: DataSession<L>): void {
    this.#sessions.delete(session);
    this.#hooks.closed?.(session);
  }

  adopt(live: L, language: Language, resumed?: { bytes: number; t0: number }): DataSession<L> {
    const session = new DataSession(this, live, language, resumed);
    this.#sessions.add(session);
    return session;
  }

  /** A fresh session: live now, or at its first run for a lazy backend. */
  async open(language: Language = ENGINE_INFO[this.backend.engine].languages[0]): Promise<DataSession<L>> {
    this.#admit();
    if (this.backend.lazy) {
      const session = new DataSession<L>(this, undefined, language);
      this.#sessions.add(session);
      return session;
    }
    const live = await this.backend.open();
    if (this.#closed) {
      await live.close("closed");
      throw new ClosedError("session");
    }
    return this.adopt(live, language);
  }

  /**
   * A live session from an authenticated snapshot's state whose header matched this engine's: loaded
   * and proven before it resolves (SnapshotRejectedError otherwise, and nothing of it remains).
   */
  async resume(
    state: Uint8Array,
    bytes: number,
    header?: Pick<SnapshotHeader, "language" | "base">,
    options: ResumeOptions = {},
  ): Promise<DataSession<L>> {
    this.#admit();
    if (!this.backend.load)
      throw new SnapshotRejectedError("engine", `the ${this.backend.engine} engine does not resume sessions`);
    const t0 = performance.now();
    const saved = header?.base === undefined ? { state } : { state, base: header.base };
    const live = await this.backend.load(saved, { reseed: options.reseed ?? true });
    const language = header?.language ?? ENGINE_INFO[this.backend.engine].languages[0];
    return this.adopt(live, language, { bytes, t0 });
  }

  #admit(): void {
    if (this.#closed) throw new ClosedError("session");
  }

  /** Closes every session (each gives its place back, or its stored state up), then a store of its own. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    if (this.#ownStore) await this.store.close();
  }
}
