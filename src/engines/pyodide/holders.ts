// The sessions that hold a pool sidecar between their runs, and who gives one back when a run waits.
//
// A session keeps its sidecar after a run (its state lives there), so a run that finds every pool
// sidecar taken waits on whatever those sessions do next — and a session may do nothing for a long
// time, or be unable to give its sidecar back at all: a guest that opens a file, grows its state past
// sessions.maxSnapshotBytes, or runs on a cold-started sidecar makes a state that cannot leave its
// interpreter. The floor: no guest makes another tenant's run fail or wait on it. So whenever runs
// wait that no sidecar on its way will serve (`#short`), idle holders are taken, least recently used
// first, one sidecar per waiting run:
//
// 1. a session that can move is evicted (its state to the store, its sidecar reset, proven, back);
// 2. one that cannot keeps its sidecar, which leaves the pool (`pin`; the pool starts another), while
//    fewer than `python.maxPinned` sidecars are kept that way: memory is bounded at pool + standby +
//    maxPinned sidecars;
// 3. past that, the least recently used idle session that cannot move — this one or one already
//    pinned — is ended: its sidecar is given back (reset, or killed if pinned), and its own next run
//    gets a SessionLostError saying why. Nobody else notices.
//
// A pinned session that runs again is evicted as soon as it is idle if it can move by then: its
// sidecar has no slot in the pool, so holding it costs a sidecar's memory for nothing.
// Runs still wait for sessions that are *running* (bounded by their deadlines) and for busy stateless
// runs, as for any pool: what never happens is a wait on a guest's choice, or a refusal.

import type { WarmPool } from "../../pool/pool.ts";
import type { DataSession } from "../sessions/data-session.ts";
import type { SidecarProcess } from "./sidecar-client.ts";
import type { SidecarState } from "./state-backend.ts";

type PyodideSession = DataSession<SidecarState>;

const leastRecentlyUsed = (a: PyodideSession, b: PyodideSession): number => a.lastUsed - b.lastUsed;

export class SessionHolders {
  readonly #pool: WarmPool<SidecarProcess>;
  readonly #size: number;
  readonly #maxPinned: number;
  /** Sessions holding a sidecar (in the pool or pinned) and not running. */
  readonly #idle = new Set<PyodideSession>();
  /** Sidecars taken out of the pool for sessions whose state cannot leave them, and whose each is. */
  readonly #pinned = new Map<SidecarProcess, PyodideSession>();
  /** Pinned sidecars killed and not yet exited (close waits for them). */
  readonly #exits = new Set<Promise<unknown>>();
  #reclaiming = false;
  /** Something changed while a reclaim ran (a session became idle, a run queued): look again. */
  #again = false;

  constructor(pool: WarmPool<SidecarProcess>, size: number, maxPinned: number) {
    this.#pool = pool;
    this.#size = size;
    this.#maxPinned = maxPinned;
  }

  /** Sidecars kept beyond the pool now (tests look). */
  get pinned(): number {
    return this.#pinned.size;
  }

  /** A session holding a sidecar became idle (true) or busy (false). */
  idle(session: PyodideSession, idle: boolean): void {
    if (!idle) {
      this.#idle.delete(session);
      return;
    }
    this.#idle.add(session);
    // Ran since it was pinned and may move now: give the pinned sidecar up (a refusal is said once).
    if (this.#isPinned(session) && session.unmovable === undefined) void session.evict().catch(() => false);
    else this.reclaim();
  }

  closed(session: PyodideSession): void {
    this.#idle.delete(session);
  }

  /**
   * Takes a session's sidecar out of the pool for it alone (the pool starts a replacement), when it
   * still cannot move and is idle between runs; false when it ran since it was chosen.
   */
  #pin(session: PyodideSession): boolean {
    const sidecar = session.live?.sidecar;
    if (!session.pinnable || !sidecar) return false;
    this.#pool.detach(sidecar);
    this.#pinned.set(sidecar, session);
    return true;
  }

  /** Gives a session's sidecar back: to the pool, or killed when pinned (it has no slot there). */
  release(sidecar: SidecarProcess, reusable: boolean): void {
    if (!this.#pinned.delete(sidecar)) {
      this.#pool.release(sidecar, reusable);
      return;
    }
    this.#kill(sidecar);
  }

  /** Kills every pinned sidecar (the engine's destroy: the pool kills its own). */
  destroy(): Promise<void> {
    for (const sidecar of this.#pinned.keys()) this.#kill(sidecar);
    this.#pinned.clear();
    return this.exited();
  }

  /** Resolves when every pinned sidecar killed so far has exited. */
  async exited(): Promise<void> {
    await Promise.allSettled([...this.#exits]);
  }

  /**
   * Frees pool sidecars from idle sessions while runs wait that no sidecar on its way will serve. One
   * reclaim runs at a time; a call during it makes it look again before it stops.
   */
  reclaim(): void {
    if (this.#reclaiming) {
      this.#again = true;
      return;
    }
    this.#reclaiming = true;
    // Each step catches its own failures (an eviction that fails leaves that session as it was); a
    // throw here has no caller to reach, and the next trigger looks again.
    this.#loop().catch(() => undefined);
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false;
        while (this.#short() && (await this.#freeOne()));
      } while (this.#again);
    } finally {
      // In the same turn as the last look: a reclaim() after this starts a new loop.
      this.#reclaiming = false;
    }
  }

  /** Runs wait beyond the sidecars starting for empty pool slots (which will serve the first of them). */
  #short(): boolean {
    const s = this.#pool.stats;
    const coming = Math.max(0, Math.min(s.starting, this.#size - s.idle - s.busy));
    return s.waiting > coming;
  }

  #isPinned(session: PyodideSession): boolean {
    for (const holder of this.#pinned.values()) if (holder === session) return true;
    return false;
  }

  /** One pool sidecar freed (or a replacement started), or false when no idle session holds one. */
  async #freeOne(): Promise<boolean> {
    const holders = [...this.#idle].filter((s) => !this.#isPinned(s)).sort(leastRecentlyUsed);
    for (const victim of holders) {
      if (!this.#idle.has(victim)) continue;
      if (victim.unmovable === undefined) {
        if (await victim.evict().catch(() => false)) return true;
        // Busy again, or gone: the next one. Refused: it cannot move (below).
        if (victim.unmovable === undefined) continue;
      }
      if (await this.#pinOrEnd(victim)) return true;
    }
    return false;
  }

  async #pinOrEnd(victim: PyodideSession): Promise<boolean> {
    if (this.#pinned.size < this.#maxPinned) return this.#pin(victim);
    const pinnedIdle = [...this.#pinned.values()].filter((s) => this.#idle.has(s) && s.unmovable !== undefined);
    const oldest = [victim, ...pinnedIdle].sort(leastRecentlyUsed)[0]!;
    // Ending a pinned session frees its place beyond the pool for this one.
    if (oldest !== victim && (await oldest.end(this.#ended(oldest)))) return this.#pin(victim);
    return victim.end(this.#ended(victim));
  }

  #ended(session: PyodideSession): string {
    const kept =
      this.#maxPinned === 0
        ? "python.maxPinned is 0: no sidecar is kept beyond the pool for such a session"
        : `the ${this.#maxPinned} sidecar${this.#maxPinned === 1 ? "" : "s"} that such sessions may keep beyond the pool (python.maxPinned) were taken, and it was the least recently used`;
    return `another run needed its sidecar and its state could not leave it (${session.unmovable ?? "it could not be saved"}); ${kept}`;
  }

  #kill(sidecar: SidecarProcess): void {
    sidecar.kill();
    const exit = sidecar.jail.exited;
    this.#exits.add(exit);
    const done = () => void this.#exits.delete(exit);
    exit.then(done, done);
  }
}
