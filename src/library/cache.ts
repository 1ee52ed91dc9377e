// The cache directory is shared by every wasmcell install and version on the machine (one user's, or
// /var/cache/wasmcell): each keeps its package library (`packages-<lock digest>`) and its Pyodide
// snapshots (`pyodide-<content key>.snapshot`) there, and installs with the same content share them.
// Nothing is evicted for being old or for another version being newer; only when the cache is over
// its size budget (WASMCELL_CACHE_MAX_MB, default 1024 MiB: about ten versions' library and
// snapshots) are entries removed, least recently used first, and never one that a live process holds:
//   - a process that uses an entry writes a lease, `leases/<entry>.<pid>` holding its pid and start
//     time; the lease is removed when the process exits, and one whose process is gone (or whose pid
//     now names a process started at another time) counts for nothing;
//   - last use is the mtime of the entry's stamp (the snapshot's `.sha256` record, the library's
//     directory), set at each use; neither is part of what a reader verifies, so touching it makes
//     no other process re-hash anything.
// Not covered: processes in another pid namespace sharing the directory (a container's pid means
// nothing here) see each other's leases as dead; give each container its own cache.

import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
import type { EventInput } from "../core/events.ts";
import { isAlive, startTime, treeBytes } from "../jail/index.ts";

/**
 * The wasmcell cache: $WASMCELL_CACHE_DIR, else $XDG_CACHE_HOME/wasmcell, else (as root)
 * /var/cache/wasmcell, else ~/.cache/wasmcell. As root the jail drops to an unprivileged uid that must
 * read the package library bound from here, and root's home is usually 0700, which that uid cannot
 * traverse; the system cache directory is the root-owned place it can reach (setup makes it 0711).
 */
export function cacheDir(): string {
  if (process.env.WASMCELL_CACHE_DIR) return process.env.WASMCELL_CACHE_DIR;
  if (process.env.XDG_CACHE_HOME) return join(process.env.XDG_CACHE_HOME, "wasmcell");
  if (process.getuid?.() === 0) return "/var/cache/wasmcell";
  return join(homedir(), ".cache", "wasmcell");
}

export const DEFAULT_CACHE_MAX_MB = 1024;

/** The size budget: WASMCELL_CACHE_MAX_MB (a positive whole number of MiB), else the default. */
export function cacheBudgetBytes(): number {
  const raw = process.env.WASMCELL_CACHE_MAX_MB;
  const mb = raw && /^[1-9][0-9]*$/.test(raw) ? Number(raw) : DEFAULT_CACHE_MAX_MB;
  return mb * 1024 * 1024;
}

/** An entry that was removed to bring the cache under its budget. */
export interface Eviction {
  /** The snapshot file or library directory removed. */
  file: string;
  bytes: number;
  /** When it was last used (ms since the epoch). */
  lastUsedMs: number;
  budgetBytes: number;
}

const SNAPSHOT = /^pyodide-[0-9a-f]+\.snapshot$/;
const LIBRARY = /^packages-[0-9a-f]{16}$/;
const TMP = /^pyodide-[0-9a-f]+\.snapshot\.([0-9]+)\.tmp(\.sha256)?$/;
const EVICTING = /^\.evicting\..+\.([0-9]+)$/;
const leasesDir = (cache: string) => join(cache, "leases");

/** A pid alone (a temporary file names no start time): a recycled pid only delays its removal. */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const held = new Map<string, string>();
let cleanupRegistered = false;

/**
 * Records that this process uses the entry `name` in `cache` (until it exits), and stamps its last use.
 * Best effort: a cache that cannot be written holds nothing to protect.
 */
export function leaseEntry(cache: string, name: string, stamp: string): void {
  const now = new Date();
  try {
    utimesSync(stamp, now, now);
  } catch {
    // not ours or gone: the lease still protects it
  }
  const file = join(leasesDir(cache), `${name}.${process.pid}`);
  if (held.has(file)) return;
  try {
    // Not recursive: a cache directory that does not exist yet is setup's to create (with its mode).
    mkdirSync(leasesDir(cache), { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return;
  }
  try {
    writeFileSync(file, `${process.pid} ${startTime(process.pid) ?? ""}\n`, { mode: 0o600 });
    held.set(file, name);
  } catch {
    return;
  }
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.once("exit", releaseAll);
  }
}

/** Removes this process's leases (at exit; tests call it to play a process that ended). */
export function releaseAll(): void {
  for (const file of held.keys()) {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
  held.clear();
}

/** Whether a live process (other than a dead one whose lease was left behind) holds `name`; dead leases are removed. */
export function leased(cache: string, name: string): boolean {
  let names: string[];
  try {
    names = readdirSync(leasesDir(cache));
  } catch {
    return false;
  }
  let live = false;
  for (const lease of names) {
    if (!lease.startsWith(`${name}.`) || !/^[0-9]+$/.test(lease.slice(name.length + 1))) continue;
    const file = join(leasesDir(cache), lease);
    let fields: string[];
    try {
      fields = readFileSync(file, "utf8").trim().split(" ");
    } catch {
      continue;
    }
    const pid = Number(fields[0]);
    const started = fields[1] ?? "";
    if (Number.isSafeInteger(pid) && pid > 0 && isAlive(pid, started)) live = true;
    else rmSync(file, { force: true });
  }
  return live;
}

interface Entry {
  name: string;
  path: string;
  remove: string[];
  bytes: number;
  lastUsedMs: number;
}

function entries(cache: string): Entry[] {
  const found: Entry[] = [];
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    try {
      if (SNAPSHOT.test(name)) {
        const record = `${path}.sha256`;
        let lastUsedMs = statSync(path).mtimeMs;
        try {
          lastUsedMs = Math.max(lastUsedMs, statSync(record).mtimeMs);
        } catch {
          // no record: the snapshot's own mtime
        }
        found.push({ name, path, remove: [path, record], bytes: statSync(path).size, lastUsedMs });
      } else if (LIBRARY.test(name)) {
        found.push({ name, path, remove: [path], bytes: treeBytes(path), lastUsedMs: statSync(path).mtimeMs });
      } else {
        // A half-written snapshot whose writer is gone (a build killed between write and rename).
        // Also an entry a collector renamed away and then died before removing it.
        const tmp = TMP.exec(name) ?? EVICTING.exec(name);
        if (tmp && !pidExists(Number(tmp[1]))) rmSync(path, { recursive: true, force: true });
      }
    } catch {
      // removed meanwhile by another process
    }
  }
  return found;
}

/**
 * Brings the cache under `budgetBytes`: removes entries by last use, oldest first, skipping `keep`
 * (the entries the caller is about to use) and every entry a live process leases. Returns what it
 * removed. The cache may stay over budget when everything left is in use.
 */
export function evictCache(
  cache: string,
  options: {
    keep: readonly string[];
    budgetBytes?: number | undefined;
    onEvicted?: ((e: Eviction) => void) | undefined;
  },
): Eviction[] {
  const budgetBytes = options.budgetBytes ?? cacheBudgetBytes();
  let all: Entry[];
  try {
    all = entries(cache);
  } catch {
    return [];
  }
  let total = all.reduce((sum, e) => sum + e.bytes, 0);
  const evicted: Eviction[] = [];
  for (const entry of all.sort((a, b) => a.lastUsedMs - b.lastUsedMs)) {
    if (total <= budgetBytes) break;
    if (options.keep.includes(entry.path) || leased(cache, entry.name)) continue;
    // A user writes its lease before it looks at the entry; so renamed out of the way first and the
    // leases read again, a user that came in between keeps it (renamed back) instead of losing it
    // half-read. One that looked in that instant sees nothing and builds its own.
    const trash = join(cache, `.evicting.${entry.name}.${process.pid}`);
    try {
      renameSync(entry.path, trash);
    } catch {
      continue; // removed or taken meanwhile
    }
    if (leased(cache, entry.name)) {
      renameSync(trash, entry.path);
      continue;
    }
    rmSync(trash, { recursive: true, force: true });
    for (const path of entry.remove.slice(1)) rmSync(path, { recursive: true, force: true });
    total -= entry.bytes;
    const eviction = { file: entry.path, bytes: entry.bytes, lastUsedMs: entry.lastUsedMs, budgetBytes };
    evicted.push(eviction);
    options.onEvicted?.(eviction);
  }
  return evicted;
}

const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));

/** One line saying what was removed and why. */
export function evictionMessage(e: Eviction): string {
  return `removed ${e.file} (${mib(e.bytes)} MiB, last used ${new Date(e.lastUsedMs).toISOString()}) to keep the cache under its ${mib(e.budgetBytes)} MiB budget (WASMCELL_CACHE_MAX_MB); an install that needs it again rebuilds it`;
}

/** The `cache.evicted` event for an eviction (reported by the Pyodide engine, which builds snapshots). */
export function evictedEvent(e: Eviction): EventInput {
  return {
    type: "cache.evicted",
    engine: "pyodide",
    file: e.file,
    bytes: e.bytes,
    lastUsed: e.lastUsedMs,
    message: evictionMessage(e),
  };
}
