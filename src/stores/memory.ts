// The default session store: blobs in this process's memory, locks in a map. Nothing survives the
// process (a DiskSessionStore does); the blobs are compressed snapshots, a few MB each.

import type { SessionLock, SessionStore } from "./store.ts";

export class MemorySessionStore implements SessionStore {
  readonly #blobs = new Map<string, Uint8Array>();
  readonly #locks = new Map<string, { until: number; token: object }>();

  /** Bytes held (the bench reports it). */
  get bytes(): number {
    let n = 0;
    for (const b of this.#blobs.values()) n += b.length;
    return n;
  }

  get(id: string): Promise<Uint8Array | undefined> {
    return Promise.resolve(this.#blobs.get(id));
  }

  put(id: string, blob: Uint8Array): Promise<void> {
    // A copy: the caller's buffer may be reused or changed after this returns.
    this.#blobs.set(id, Uint8Array.from(blob));
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.#blobs.delete(id);
    return Promise.resolve();
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
    return Promise.resolve();
  }
}
