// The default session store: blobs in this process's memory, locks in a map. Nothing survives the
// process (a DiskSessionStore does); the blobs are compressed snapshots, a few MB each. With
// `maxBytes` it keeps to a budget as DiskSessionStore does: past it the least recently used blobs are
// removed, and `evicted` says so to their owner.

import { InvalidOptionError } from "../core/errors.ts";
import type { SessionLock, SessionStore } from "./store.ts";

/** Evicted ids remembered for `evicted()`; older ones are forgotten first. */
const MAX_MARKERS = 4096;

export interface MemorySessionStoreOptions {
  /** The most bytes of blobs held; past it the least recently used go first. @defaultValue no budget */
  maxBytes?: number;
}

export class MemorySessionStore implements SessionStore {
  // A Map keeps insertion order: re-inserting on use keeps the least recently used first.
  readonly #blobs = new Map<string, Uint8Array>();
  readonly #locks = new Map<string, { until: number; token: object }>();
  readonly #evicted = new Set<string>();
  readonly #maxBytes: number;
  #total = 0;

  constructor(options: MemorySessionStoreOptions = {}) {
    const max = options.maxBytes ?? Infinity;
    if (!(max === Infinity || (Number.isSafeInteger(max) && max > 0)))
      throw new InvalidOptionError("maxBytes", `must be a positive integer, got ${String(options.maxBytes)}`);
    this.#maxBytes = max;
  }

  /** Bytes held (the bench reports it). */
  get bytes(): number {
    return this.#total;
  }

  get(id: string): Promise<Uint8Array | undefined> {
    const blob = this.#blobs.get(id);
    if (blob) {
      this.#blobs.delete(id);
      this.#blobs.set(id, blob);
    }
    return Promise.resolve(blob);
  }

  put(id: string, blob: Uint8Array): Promise<void> {
    if (blob.length > this.#maxBytes)
      return Promise.reject(
        new InvalidOptionError("session blob", `${blob.length} bytes is over the store's budget (${this.#maxBytes})`),
      );
    this.#remove(id);
    this.#evicted.delete(id);
    // A copy: the caller's buffer may be reused or changed after this returns.
    this.#blobs.set(id, Uint8Array.from(blob));
    this.#total += blob.length;
    for (const old of this.#blobs.keys()) {
      if (this.#total <= this.#maxBytes) break;
      if (old === id) continue;
      this.#remove(old);
      this.#evicted.add(old);
      if (this.#evicted.size > MAX_MARKERS) this.#evicted.delete(this.#evicted.values().next().value as string);
    }
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.#remove(id);
    this.#evicted.delete(id);
    return Promise.resolve();
  }

  evicted(id: string): Promise<boolean> {
    return Promise.resolve(this.#evicted.has(id));
  }

  #remove(id: string): void {
    const blob = this.#blobs.get(id);
    if (blob) this.#total -= blob.length;
    this.#blobs.delete(id);
  }

  lock(id: string, ttlMs: number): Promise<SessionLock | undefined> {
    const now = Date.now();
    const held = this.#locks.get(id);
    if (held && held.until > now) return Promise.resolve(undefined);
    const token = {};
    this.#locks.set(id, { until: now + ttlMs, token });
    const locks = this.#locks;
    return Promise.resolve({
      extend(ms: number) {
        const cur = locks.get(id);
        if (cur?.token !== token) return Promise.resolve(false);
        cur.until = Date.now() + ms;
        return Promise.resolve(true);
      },
      release() {
        if (locks.get(id)?.token === token) locks.delete(id);
        return Promise.resolve();
      },
    });
  }

  close(): Promise<void> {
    this.#blobs.clear();
    this.#locks.clear();
    this.#evicted.clear();
    this.#total = 0;
    return Promise.resolve();
  }
}
