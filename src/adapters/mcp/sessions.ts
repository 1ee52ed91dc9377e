// The stateful HTTP server's sessions: a bounded table in which a session is never closed while one of
// its requests is in flight, and an idle one (no request for `ttlMs`) expires. At the cap a new client
// is refused with the time until the next idle session expires — the old rule (close the least recently
// used session) broke clients that were still working.

export interface SessionEntry {
  close(): Promise<void>;
}

interface Slot {
  entry: SessionEntry;
  /** Requests of this session in flight (POST/DELETE; a client's open GET stream does not count). */
  active: number;
  lastUsed: number;
}

export class SessionTable {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #slots = new Map<string, Slot>();
  readonly #sweeper: NodeJS.Timeout;
  /** Initialize requests admitted whose session id is not known yet. */
  #pending = 0;
  /** Sessions closed for being idle past the TTL, for /metrics. */
  expired = 0;

  constructor(max: number, ttlMs: number) {
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(ttlMs / 4, 30_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#slots.size;
  }

  /**
   * Reserves room for a new session, or says how many seconds until one idle session expires (the
   * Retry-After a refused client gets). Call `done()` once the initialize request has been answered.
   */
  reserve(): { done: () => void } | { retryAfterSeconds: number } {
    this.sweep();
    if (this.#slots.size + this.#pending >= this.#max) return { retryAfterSeconds: this.#untilNextExpiry() };
    this.#pending++;
    let done = false;
    return {
      done: () => {
        if (!done) this.#pending--;
        done = true;
      },
    };
  }

  add(id: string, entry: SessionEntry): void {
    this.#slots.set(id, { entry, active: 0, lastUsed: Date.now() });
  }

  delete(id: string): void {
    this.#slots.delete(id);
  }

  /** Marks a request of session `id` in flight; the returned function ends it. Undefined: unknown id. */
  begin(id: string): (() => void) | undefined {
    const slot = this.#slots.get(id);
    if (!slot) return undefined;
    slot.active++;
    slot.lastUsed = Date.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      slot.active--;
      slot.lastUsed = Date.now();
    };
  }

  /** Closes the sessions idle for longer than the TTL. */
  sweep(now = Date.now()): void {
    for (const [id, slot] of this.#slots) {
      if (slot.active === 0 && now - slot.lastUsed >= this.#ttlMs) {
        this.#slots.delete(id);
        this.expired++;
        void slot.entry.close().catch(() => undefined);
      }
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    const slots = [...this.#slots.values()];
    this.#slots.clear();
    await Promise.allSettled(slots.map((s) => s.entry.close()));
  }

  #untilNextExpiry(): number {
    const now = Date.now();
    let soonest = this.#ttlMs;
    for (const slot of this.#slots.values()) {
      if (slot.active === 0) soonest = Math.min(soonest, slot.lastUsed + this.#ttlMs - now);
    }
    return Math.max(1, Math.ceil(soonest / 1000));
  }
}
