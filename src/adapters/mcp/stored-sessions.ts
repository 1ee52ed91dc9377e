// Stateful MCP sessions kept in a SessionStore, so they outlive the server process (a DiskSessionStore)
// and any replica can serve them (a RedisSessionStore). A session is named by its handle
// (session-ids.ts) — the one a 2026-07-28 run_code returned, a 2025-11-25 client's Mcp-Session-Id, or
// a fork's — and one language: record key `mcp-<handle>-<language>`.
//
// Every call on a session, on whichever process receives it:
//   take the session's lock (bounded wait, lease renewed while it runs; SessionBusyError past the wait)
//   → read the record → reuse the interpreter this process holds if the record is still the one it
//   saved, else resume the record's snapshot (or open a fresh session when there is none)
//   → run → snapshot → confirm the lock is still held → put the new record → release → reply.
// So the state after each completed call is in the store before its reply is sent: a process killed
// mid-call loses only that call (never saved; its lease runs out and the next call resumes the last
// record elsewhere). A call whose reply was lost after the save (the process died between put and
// reply) has happened: a client that retries it runs it a second time — at least once, not exactly once.
//
// A session whose state cannot be snapshotted (SnapshotUnsupportedError: JavaScript on a build that
// cannot snapshot QuickJS, a Python session holding an open file) stays live in the process that ran
// it, and its record says so ("pinned"): a call that reaches another process, or this one after a
// restart, gets an error saying the state is gone, once, and then a fresh session — never a silent one.
// So does a session whose record the store removed to stay within its size budget.
//
// Ownership: a family's first session (its handle, minted by the server for one credential) owns its
// records and its forks', and they all count against its quota (session-ledger.ts). Closing a session
// leaves a tombstone (`mcp-<handle>-closed`), so its handle replayed later is refused.

import {
  InvalidOptionError,
  SessionBusyError,
  SnapshotRejectedError,
  SnapshotUnsupportedError,
} from "../../core/errors.ts";
import type { Sandbox, Session } from "../../sandbox.ts";
import { holdSessionLock, type HeldSessionLock } from "../../stores/lock.ts";
import { MemorySessionStore } from "../../stores/memory.ts";
import type { SessionStore } from "../../stores/store.ts";
import { LANGUAGES, type Language, type PythonEngine, type RunRequest, type RunResult } from "../../core/types.ts";
import { ENDS_SESSION, type SessionRunner } from "../tools/run-code.ts";
import { decodeRecord, encodeRecord, newId, type StoredSession } from "./record.ts";
import type { Handle, SessionIds } from "./session-ids.ts";
import { SessionLedgers } from "./session-ledger.ts";

/**
 * Refuses a store that outlives this process (on disk, in Redis) when the sandbox signs snapshots with
 * its per-process default key: no later process could resume what it stores.
 */
export function checkStoreKey(sandbox: Sandbox, store: SessionStore): void {
  if (!(store instanceof MemorySessionStore) && !sandbox.options.sessions.keyGiven)
    throw new InvalidOptionError(
      "sessionStore",
      "a store other processes (or this one after a restart) read needs the sandbox's sessions.key, shared by all of them: with the per-process default key no other process could resume a snapshot",
    );
}

export interface StoredSessionsOptions {
  sandbox: Sandbox;
  store: SessionStore;
  pythonEngine: PythonEngine;
  /** A session lock's lease (renewed while a call runs; a dead holder frees it after this). */
  leaseMs: number;
  /** How long a call waits for a session locked by another call before it is refused as busy. */
  waitMs: number;
  /** Interpreters this process keeps live between calls; past it the least recently used is closed. */
  maxLive: number;
  /** A live interpreter with no call for this long is closed (its state stays in the store). */
  idleMs: number;
  /** Mints and checks session and fork ids. */
  ids: SessionIds;
  /** The most bytes of records one MCP session owns in the store (its languages and its forks'). */
  quotaBytes: number;
}

interface Live {
  session: Session;
  /** The generation of the record this process saved last for it. */
  generation: string;
  lastUsed: number;
}

export class StoredSessions {
  readonly #o: StoredSessionsOptions;
  /** This process, as pinned records name it. */
  readonly #instance = newId();
  readonly #live = new Map<string, Live>();
  /** Keys with a call in progress here (under their lock): never closed by the sweep or the cap. */
  readonly #busy = new Set<string>();
  readonly #sweeper: NodeJS.Timeout;
  readonly #ledgers: SessionLedgers;

  constructor(options: StoredSessionsOptions) {
    this.#o = options;
    this.#ledgers = new SessionLedgers(options);
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(250, Math.min(options.idleMs / 4, 30_000)));
    this.#sweeper.unref();
  }

  /** Interpreters held live in this process. */
  get size(): number {
    return this.#live.size;
  }

  /** Mints and checks this deployment's session and fork ids. */
  get ids(): SessionIds {
    return this.#o.ids;
  }

  /**
   * The `run_code` runner for a client holding credential `identity`. With `scope` (a 2025-11-25
   * client's session, its Mcp-Session-Id) a call without a `session` argument runs in that session and
   * one with it names a fork in the same family; without `scope` (2026-07-28) every call names its
   * session's handle, and any handle minted for `identity` is accepted.
   */
  runner(identity: string, scope?: Handle): SessionRunner {
    return {
      run: (request, session) => {
        const named = this.#named(identity, scope, session);
        return this.run(named.owner, named.handle, request);
      },
      // run() has already dropped a session that a failure ended, under its lock.
      reset: () => undefined,
      // Per request, not per session: the sessions stay stored (forget() removes them).
      close: () => Promise.resolve(),
    };
  }

  /** Runs `request` in session `id` of family `owner`; refused if the session was closed. */
  async run(owner: string, id: string, request: RunRequest): Promise<RunResult> {
    const { language, engine: _engine, ...rest } = request;
    const key = recordKey(id, language);
    await this.#assertOpen(owner, id);
    return this.#locked(key, request.signal, async (lock) => {
      const bytes = await this.#o.store.get(key);
      const live = await this.#open(owner, key, language, bytes);
      const result = await live.session.run(rest);
      if (!result.ok && ENDS_SESSION.has(result.error.kind)) {
        await this.#drop(owner, key);
        return result;
      }
      await this.#save(owner, key, live, lock, bytes?.length ?? 0);
      return result;
    });
  }

  /**
   * Copies the `language` interpreter of session `source` into a new session of the same family,
   * minted for `identity`; returns the new session's handle.
   */
  async fork(identity: string, source: Handle, language: Language): Promise<string> {
    await this.#assertOpen(source.owner, source.handle);
    const key = recordKey(source.handle, language);
    const forkId = this.#o.ids.fork(identity, source);
    const forkKey = recordKey(forkId, language);
    const owner = source.owner;
    await this.#locked(key, undefined, async () => {
      const bytes = await this.#o.store.get(key);
      if (bytes === undefined)
        throw new InvalidOptionError(
          "language",
          `there is no ${language} session to fork yet: run ${language} code first`,
        );
      const copy = await (await this.#open(owner, key, language, bytes)).session.fork();
      try {
        const record: StoredSession = { kind: "snapshot", generation: newId(), snapshot: await copy.snapshot() };
        const encoded = encodeRecord(record);
        await this.#ledgers.charge(owner, forkKey, encoded.length);
        await this.#o.store.put(forkKey, encoded);
        this.#keep(forkKey, { session: copy, generation: record.generation, lastUsed: Date.now() });
      } catch (error) {
        await copy.close();
        throw error;
      }
    });
    return forkId;
  }

  /**
   * Ends session `session`: removes its records and interpreters (a family's first session takes its
   * forks with it) and leaves a tombstone, so the handle replayed later is refused, not a fresh session.
   */
  async end(session: Handle): Promise<void> {
    await this.#o.store.put(closedKey(session.handle), CLOSED);
    if (session.root) return this.forget(session.owner);
    await Promise.all(
      LANGUAGES.map((l) =>
        this.#locked(recordKey(session.handle, l), undefined, async () => {
          this.#close(recordKey(session.handle, l));
          await this.#o.store.delete(recordKey(session.handle, l));
          await this.#ledgers.discharge(session.owner, recordKey(session.handle, l));
        }),
      ),
    );
  }

  /** Removes family `owner`'s records (every language, and its forks') and interpreters. */
  async forget(owner: string): Promise<void> {
    const keys = new Set([...LANGUAGES.map((l) => recordKey(owner, l)), ...(await this.#ledgers.records(owner))]);
    await Promise.all(
      [...keys].map((key) =>
        this.#locked(key, undefined, async () => {
          this.#close(key);
          await this.#o.store.delete(key);
        }),
      ),
    );
    await this.#ledgers.forget(owner);
  }

  /** Whether session `handle` (of family `owner`) or its family was closed. */
  async isClosed(owner: string, handle: string): Promise<boolean> {
    const [self, family] = await Promise.all([
      this.#o.store.get(closedKey(handle)),
      handle === owner ? undefined : this.#o.store.get(closedKey(owner)),
    ]);
    return self !== undefined || family !== undefined;
  }

  async #assertOpen(owner: string, handle: string): Promise<void> {
    if (await this.isClosed(owner, handle))
      throw new InvalidOptionError(
        "session",
        `"${handle}" names a session that was closed: its state is gone and the handle cannot be used again; call run_code without a session to start a new one`,
      );
  }

  /** The session a call names, checked against the caller's credential and scope. */
  #named(identity: string, scope: Handle | undefined, session: string | undefined): Handle {
    if (session === undefined) {
      if (scope) return scope;
      throw new InvalidOptionError("session", "names the session to run in: pass the handle run_code returned");
    }
    const named = this.#o.ids.read(identity, session);
    if (!named || (scope && named.owner !== scope.owner))
      throw new InvalidOptionError(
        "session",
        scope
          ? `"${session}" is not a session of this connection: name one that fork_session returned to it`
          : `"${session}" is not a session handle this server issued to this client: pass a handle run_code or fork_session returned, or omit session to start a new one`,
      );
    return named;
  }

  /** Closes the live interpreters; the store and what is in it stay (the caller owns the store). */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const live = [...this.#live.values()];
    this.#live.clear();
    await Promise.allSettled(live.map((l) => l.session.close()));
  }

  async #locked<T>(
    key: string,
    signal: AbortSignal | undefined,
    work: (lock: HeldSessionLock) => Promise<T>,
  ): Promise<T> {
    const times = { leaseMs: this.#o.leaseMs, waitMs: this.#o.waitMs };
    const lock = await holdSessionLock(this.#o.store, key, times, signal);
    this.#busy.add(key);
    try {
      return await work(lock);
    } finally {
      this.#busy.delete(key);
      // A release that fails leaves the lock to expire with its lease.
      await lock.release().catch(() => undefined);
    }
  }

  /** The interpreter for `key` as the stored record says it is; called under the key's lock. */
  async #open(owner: string, key: string, language: Language, bytes: Uint8Array | undefined): Promise<Live> {
    if (bytes === undefined && (await this.#o.store.evicted?.(key))) {
      await this.#drop(owner, key);
      throw new SnapshotRejectedError(
        "evicted",
        `this ${language} session's state is gone: the session store removed it to stay within its size budget (the least recently used go first); the next call starts a fresh session`,
      );
    }
    let record: StoredSession | undefined;
    try {
      record = bytes === undefined ? undefined : decodeRecord(bytes);
    } catch (error) {
      await this.#drop(owner, key);
      throw gone(language, error as Error);
    }
    const held = this.#live.get(key);
    if (held && held.generation === record?.generation) {
      held.lastUsed = Date.now();
      return held;
    }
    // Stale (another process ran the session since this one saved it) or removed: never reused.
    if (held) this.#close(key);
    let session: Session;
    if (record === undefined) {
      session = await this.#o.sandbox.session(
        language === "python" ? { language, engine: this.#o.pythonEngine } : { language },
      );
    } else if (record.kind === "pinned") {
      await this.#drop(owner, key);
      throw new SnapshotUnsupportedError(
        "engine",
        `this ${language} session's state could not be snapshotted, so it lived only in the server process that ran it, which no longer holds it (a restart, another replica, or idle past its TTL): its variables are gone, and the next call starts a fresh session`,
      );
    } else {
      try {
        // The same session carrying on (its last call ran elsewhere): its `random` sequence too.
        session = await this.#o.sandbox.resume(record.snapshot, { reseed: false });
      } catch (error) {
        // A key mismatch is this process's configuration, not the record's fault: keep the record for
        // the processes that share the right key. Any other refusal will not pass anywhere: drop it.
        if (error instanceof SnapshotRejectedError && error.reason !== "key") {
          await this.#drop(owner, key);
          throw gone(language, error);
        }
        throw error;
      }
    }
    return this.#keep(key, { session, generation: record?.generation ?? "", lastUsed: Date.now() });
  }

  /**
   * Snapshots the session after a run and stores it, if the lock is still ours and the record fits
   * `owner`'s quota (`before`: the size of the record it replaces); under the lock.
   */
  async #save(owner: string, key: string, live: Live, lock: HeldSessionLock, before: number): Promise<void> {
    let record: StoredSession;
    try {
      record = { kind: "snapshot", generation: newId(), snapshot: await live.session.snapshot() };
    } catch (error) {
      if (!(error instanceof SnapshotUnsupportedError)) {
        this.#close(key);
        throw error;
      }
      record = { kind: "pinned", generation: newId(), owner: this.#instance };
    }
    if (!(await lock.confirm())) {
      this.#close(key);
      throw new SessionBusyError(
        "lost",
        "the session's lock ran out while this call ran (the server stalled past its lease), so its result and state were not saved: the session is as it was before this call; retry it",
      );
    }
    const encoded = encodeRecord(record);
    try {
      // Only a record that grows is charged again: a smaller one keeps its larger charge.
      if (encoded.length > before) await this.#ledgers.charge(owner, key, encoded.length);
      await this.#o.store.put(key, encoded);
    } catch (error) {
      // The interpreter is ahead of the stored record now: never reused.
      this.#close(key);
      throw error;
    }
    live.generation = record.generation;
  }

  #keep(key: string, live: Live): Live {
    this.#live.set(key, live);
    // Past the cap, close the least recently used interpreters not in a call (their state is stored).
    if (this.#live.size > this.#o.maxLive) {
      const idle = [...this.#live].filter(([k]) => !this.#busy.has(k) && k !== key);
      idle.sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      for (const [k] of idle.slice(0, this.#live.size - this.#o.maxLive)) this.#close(k);
    }
    return live;
  }

  async #drop(owner: string, key: string): Promise<void> {
    this.#close(key);
    await this.#o.store.delete(key);
    await this.#ledgers.discharge(owner, key);
  }

  #close(key: string): void {
    const live = this.#live.get(key);
    this.#live.delete(key);
    // Its state is in the store (or gone on purpose); nobody is waiting on this close.
    live?.session.close().catch(() => undefined);
  }

  #sweep(now = Date.now()): void {
    for (const [key, live] of this.#live) {
      if (!this.#busy.has(key) && now - live.lastUsed >= this.#o.idleMs) this.#close(key);
    }
  }
}

/** A stored session's record key: the durable id (a handle) and the language. */
function recordKey(id: string, language: Language): string {
  return `mcp-${id}-${language}`;
}

/** The tombstone a closed session leaves. */
function closedKey(id: string): string {
  return `mcp-${id}-closed`;
}

const CLOSED = new TextEncoder().encode("closed");

function gone(language: Language, cause: Error): SnapshotRejectedError {
  const reason = cause instanceof SnapshotRejectedError ? cause.reason : "corrupt";
  return new SnapshotRejectedError(
    reason,
    `this ${language} session's stored state could not be resumed (${cause.message}); it was removed, and the next call starts a fresh session`,
  );
}
