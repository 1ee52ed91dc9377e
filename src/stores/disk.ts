// A session store on disk: one 0600 file per session in a 0700 directory, written atomically (a temp
// file in the same directory, fsynced, then renamed over the old one: a reader sees the old blob or the
// new, never half of one), within a size budget (the least recently used blobs are removed first;
// each leaves an empty `ID.evicted` marker, so its owner can be told its state is gone rather than
// find nothing, until the id is put or deleted again; the newest MAX_MARKERS markers are kept).
// With a configured `sessions.key`, sessions in it outlive the process (an MCP server's restart).
// Ids are validated so they cannot name a path: [A-Za-z0-9_-], 1-128 characters.
// Locks hold across the processes of this machine (file-lock.ts: a lock file per session, `.ID.lock`,
// its lease in its modification time), so two servers on one directory never run one session at once;
// replicas on several machines share the Redis store instead.

import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InvalidOptionError } from "../core/errors.ts";
import { takeFileLock } from "./file-lock.ts";
import type { SessionLock, SessionStore } from "./store.ts";

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const SUFFIX = ".snapshot";
const EVICTED = ".evicted";
/** Markers of evicted blobs kept (empty files); past it the oldest go. */
const MAX_MARKERS = 10_000;

export interface DiskSessionStoreOptions {
  /** The directory (made 0700 if missing). */
  dir: string;
  /** The most bytes of blobs kept; past it the least recently used are removed. @defaultValue 1 GiB */
  maxBytes?: number;
}

export class DiskSessionStore implements SessionStore {
  readonly dir: string;
  readonly maxBytes: number;
  #ready: Promise<unknown> | undefined;

  constructor(options: DiskSessionStoreOptions) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes ?? 1024 * 1024 * 1024;
  }

  #path(id: string, suffix = SUFFIX): string {
    if (typeof id !== "string" || !ID.test(id))
      throw new InvalidOptionError("session id", "must be 1-128 characters of A-Z, a-z, 0-9, _ and -");
    return join(this.dir, id + suffix);
  }

  #dir(): Promise<unknown> {
    this.#ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this.#ready;
  }

  async get(id: string): Promise<Uint8Array | undefined> {
    const path = this.#path(id);
    try {
      const blob = await readFile(path);
      // Read is use: the eviction order is by last use (mtime), not by when it was written.
      const now = new Date();
      await utimes(path, now, now).catch(() => undefined);
      return blob;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async put(id: string, blob: Uint8Array): Promise<void> {
    const path = this.#path(id);
    await this.#dir();
    if (blob.length > this.maxBytes)
      throw new InvalidOptionError(
        "session blob",
        `${blob.length} bytes is over the store's budget (${this.maxBytes})`,
      );
    const temp = join(this.dir, `.${id}.${randomBytes(6).toString("hex")}.tmp`);
    const file = await open(temp, "wx", 0o600);
    try {
      await file.writeFile(blob);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await rm(this.#path(id, EVICTED), { force: true });
    await this.#trim(id);
  }

  /**
   * Removes the least recently used blobs (never `keep`) until the rest fit the budget, marking each,
   * and the oldest markers past MAX_MARKERS.
   */
  async #trim(keep: string): Promise<void> {
    const entries: { path: string; size: number; used: number }[] = [];
    const markers: { path: string; used: number }[] = [];
    let total = 0;
    for (const name of await readdir(this.dir)) {
      const marker = name.endsWith(EVICTED);
      if (!name.endsWith(SUFFIX) && !marker) continue;
      const path = join(this.dir, name);
      const s = await stat(path).catch(() => undefined);
      if (!s) continue;
      if (marker) markers.push({ path, used: s.mtimeMs });
      else {
        total += s.size;
        if (name !== keep + SUFFIX) entries.push({ path, size: s.size, used: s.mtimeMs });
      }
    }
    entries.sort((a, b) => a.used - b.used);
    for (const e of entries) {
      if (total <= this.maxBytes) break;
      const marker = e.path.slice(0, -SUFFIX.length) + EVICTED;
      await writeFile(marker, "", { mode: 0o600 });
      await rm(e.path, { force: true });
      total -= e.size;
      markers.push({ path: marker, used: Date.now() });
    }
    markers.sort((a, b) => a.used - b.used);
    for (const m of markers.slice(0, Math.max(0, markers.length - MAX_MARKERS))) await rm(m.path, { force: true });
  }

  async evicted(id: string): Promise<boolean> {
    return (await stat(this.#path(id, EVICTED)).catch(() => undefined)) !== undefined;
  }

  async delete(id: string): Promise<void> {
    await rm(this.#path(id), { force: true });
    await rm(this.#path(id, EVICTED), { force: true });
  }

  async lock(id: string, ttlMs: number): Promise<SessionLock | undefined> {
    this.#path(id);
    await this.#dir();
    return takeFileLock(join(this.dir, `.${id}.lock`), ttlMs);
  }

  /** Nothing to free: locks are released by their holders (a holder's process exiting lets them lapse). */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
