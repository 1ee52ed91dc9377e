// Where session snapshots live while no interpreter holds them: the interface every store implements
// (in memory, on disk, Redis), so the engines and the servers never know which one they talk to.
// A blob is opaque here: authenticated and checked by the resume path, never trusted because a store
// returned it (a store is storage, not a source of truth).

/** A held lock on one session id: while held, no other holder (process or replica) runs that session. */
export interface SessionLock {
  /** Keeps the lock for another `ttlMs` (call before it runs out); false when it was lost meanwhile. */
  extend(ttlMs: number): Promise<boolean>;
  /** Gives the lock up. Idempotent. */
  release(): Promise<void>;
}

export interface SessionStore {
  /** The blob stored under `id`, or undefined when there is none. */
  get(id: string): Promise<Uint8Array | undefined>;
  /** Stores `blob` under `id`, replacing any earlier one, atomically (a reader sees the old or the new). */
  put(id: string, blob: Uint8Array): Promise<void>;
  /** Removes `id`; no error when it is not there. */
  delete(id: string): Promise<void>;
  /**
   * Takes the lock on `id` for `ttlMs`, or undefined when someone else holds it. Stores that serve one
   * process may implement it in memory; a shared store (Redis) must make it hold across processes.
   */
  lock(id: string, ttlMs: number): Promise<SessionLock | undefined>;
  /**
   * Whether `id` was removed by the store itself (to stay within a size budget) since it was last
   * put, and not deleted since: its owner was not the one who ended it, and should hear so. Stores
   * that never remove a blob on their own leave it out.
   */
  evicted?(id: string): Promise<boolean>;
  /** Frees what the store holds (connections, timers). */
  close(): Promise<void>;
}
