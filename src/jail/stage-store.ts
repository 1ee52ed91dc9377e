// The store that staged copies (stage.ts) live in: content-addressed directories shared by every
// process of this user, a marker for each live process that uses one, and a collector that removes
// copies nobody uses — never one a live process holds.
//
// Layout of the root (a directory only this user may write, checked before every use):
//   <key>/                      a finished copy (immutable; renamed into place whole)
//   <key>.use.<pid>.<start>.<tid>   thread <tid> of process <pid> (started at <start>, from
//                                   /proc/<pid>/stat) uses <key>
//   <key>.gc.<pid>.<start>.<tid>    a collector is deciding whether to remove <key>
//   .building.<key>.<pid>.<start>.<tid>.<n>   a copy being made
//   .trash.<key>.<pid>.<start>.<tid>.<n>      a copy being removed
// (A marker names the thread so one thread's exit never drops another's; it protects until the
// process is gone.)
//
// Unused copies are kept for the next process (a fresh copy of the Node binary and Pyodide takes
// ~0.7 s) within a budget: 7 days idle, 512 MiB, 64 copies.
//
// Why it is safe without a lock: a user writes its marker *before* it looks at <key>, and a collector
// claims <key> (its .gc file) *before* it looks for markers. So either the collector sees the marker
// and keeps the copy, or the user sees the claim and waits until the copy is gone or kept; a copy is
// only renamed away after its collector saw no live marker. A process is told apart from a later one
// with the same pid by its start time, so a recycled pid keeps nothing alive and protects nothing.
//
// The root must be a real directory (not a symlink) owned by this user, writable by nobody else, in a
// parent that nobody else can rename it out of (owned by root or us, and sticky if world-writable):
// then nobody but this user can plant, swap or change anything in it. Every entry is checked again
// (lstat: a directory owned by us, not group/other-writable) before it is trusted; anything else is
// thrown away and made again.

import {
  chmodSync,
  lstatSync,
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
import { dirname, join } from "node:path";
import { threadId } from "node:worker_threads";

/** How long an unused copy is kept for the next process (7 days). */
export const MAX_IDLE_MS = 7 * 24 * 3600 * 1000;
/** How many bytes of unused copies are kept, the most recently used first (512 MiB). */
export const MAX_UNUSED_BYTES = 512 * 1024 * 1024;
/** How many unused copies are kept, the most recently used first (each temporary checkout has its own). */
export const MAX_UNUSED_COPIES = 64;
/** How long a user waits for a collector that has claimed a copy (it holds the claim for a rename). */
const CLAIM_WAIT_MS = 5_000;

const KEY = /^[0-9a-f]{32}$/;
const MARKER = /^([0-9a-f]{32})\.(use|gc)\.(\d+)\.(\d+)\.\d+$/;
const TEMP = /^\.(building|trash)\.[0-9a-f]{32}\.(\d+)\.(\d+)\.\d+\.\d+$/;

/** This process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined. */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

const HAS_PROC = (() => {
  try {
    statSync("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
})();

/** Whether process `pid`, started at `start`, still runs (a recycled pid does not count). */
export function isAlive(pid: number, start: string): boolean {
  // Our own processes are always visible in /proc (hidepid hides only other users').
  if (HAS_PROC) return startTime(pid) === start;
  try {
    process.kill(pid, 0); // not Linux: the pid alone
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const euid = (): number => process.geteuid?.() ?? 0;

/** lstat that answers undefined for a missing entry. */
function look(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Bytes of the files under `path` (symlinks counted as themselves, never followed). */
export function treeBytes(path: string): number {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of readdirSync(path)) total += treeBytes(join(path, name));
  return total;
}

export interface CollectOptions {
  /** Unused copies idle longer than this are removed. @defaultValue MAX_IDLE_MS */
  maxIdleMs?: number;
  /** Unused copies past this many bytes (most recently used kept first) are removed. @defaultValue MAX_UNUSED_BYTES */
  maxUnusedBytes?: number;
  /** Unused copies past this many (most recently used kept first) are removed. @defaultValue MAX_UNUSED_COPIES */
  maxUnusedCopies?: number;
}

export interface CollectResult {
  /** Keys of the copies removed. */
  removed: string[];
  /** Keys of the copies a live process uses. */
  inUse: string[];
  /** Keys of the unused copies kept for the next process. */
  kept: string[];
}

export class StageStore {
  readonly root: string;
  #me: string;
  #counter = 0;
  /** Keys this process has a marker for (held until it exits). */
  #held = new Set<string>();
  #exitHook = false;
  #collectedAtStart = false;

  constructor(root: string) {
    this.root = root;
    this.#me = `${process.pid}.${startTime(process.pid) ?? "0"}.${threadId}`;
  }

  /** The root, created if missing; throws if another user could plant or swap anything in it. */
  trustedRoot(): string {
    const parent = statSync(dirname(this.root));
    if ((parent.uid !== 0 && parent.uid !== euid()) || (parent.mode & 0o022 && !(parent.mode & 0o1000)))
      throw new Error(
        `${dirname(this.root)} is another user's or writable by others without the sticky bit: ${this.root} could be swapped`,
      );
    try {
      mkdirSync(this.root, { mode: 0o755 });
      chmodSync(this.root, 0o755); // the umask must not hide the copies from the jail's uid
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const st = lstatSync(this.root);
    if (!st.isDirectory() || st.uid !== euid() || (st.mode & 0o022) !== 0)
      throw new Error(
        `${this.root} is not a directory owned by uid ${euid()} and writable only by it (${
          st.isSymbolicLink() ? "a symlink" : `uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)}`
        }); remove it`,
      );
    if ((st.mode & 0o005) !== 0o005) chmodSync(this.root, 0o755);
    return this.root;
  }

  /** Whether the finished copy `<key>` exists and is ours (not a symlink, not writable by others). */
  #trusted(key: string): boolean {
    const st = look(join(this.root, key));
    return st !== undefined && st.isDirectory() && st.uid === euid() && (st.mode & 0o022) === 0;
  }

  /** Whether a finished, trusted copy of `key` is in the store (nothing is created or changed). */
  has(key: string): boolean {
    try {
      return this.#trusted(key);
    } catch {
      return false;
    }
  }

  /**
   * The directory of the copy `key`, made by `build(dir)` (which fills a fresh empty directory) if the
   * store has none. This process holds it from now until it exits: no collector removes it meanwhile.
   */
  acquire(key: string, build: (dir: string) => void): string {
    if (!KEY.test(key)) throw new Error(`not a stage key: ${key}`);
    const root = this.trustedRoot();
    if (!this.#collectedAtStart) {
      this.#collectedAtStart = true;
      this.#collectQuietly();
    }
    const dir = join(root, key);
    if (!this.#held.has(key)) {
      // The marker first, then the look: see the header.
      writeFileSync(join(root, `${key}.use.${this.#me}`), "", { mode: 0o644 });
      this.#held.add(key);
      this.#hookExit();
    }
    const deadline = Date.now() + CLAIM_WAIT_MS;
    for (;;) {
      const claim = this.#liveClaim(key);
      if (claim) {
        if (Date.now() > deadline) throw new Error(`${join(root, claim)}: a collector holds the staged copy`);
        sleepSync(2);
        continue;
      }
      if (this.#trusted(key)) {
        const now = new Date();
        utimesSync(dir, now, now); // its last use, for the collector's idle time
        return dir;
      }
      if (look(dir)) this.#discard(key); // not ours or not a directory: never trusted, made again
      const building = join(root, `.building.${key}.${this.#me}.${this.#counter++}`);
      try {
        mkdirSync(building, { mode: 0o755 });
        build(building);
        renameSync(building, dir);
        return dir;
      } catch (error) {
        rmSync(building, { recursive: true, force: true });
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "EEXIST" && code !== "ENOTEMPTY") throw error;
        // another process finished the same copy first: use it
      }
    }
  }

  /** The name of a live collector's claim on `key`, after removing claims of dead ones. */
  #liveClaim(key: string): string | undefined {
    for (const name of readdirSync(this.root)) {
      const m = MARKER.exec(name);
      if (!m || m[1] !== key || m[2] !== "gc") continue;
      if (isAlive(Number(m[3]), m[4]!)) return name;
      rmSync(join(this.root, name), { force: true });
    }
    return undefined;
  }

  #discard(key: string): void {
    const trash = join(this.root, `.trash.${key}.${this.#me}.${this.#counter++}`);
    try {
      renameSync(join(this.root, key), trash);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    rmSync(trash, { recursive: true, force: true });
  }

  /**
   * Removes copies no live process uses that are idle past `maxIdleMs` or past the `maxUnusedBytes`
   * or `maxUnusedCopies` kept (the most recently used kept first), leftovers of processes that died while building or
   * removing, and markers of dead processes. Run when a process first stages and when it exits.
   */
  collect(options: CollectOptions = {}): CollectResult {
    const maxIdle = options.maxIdleMs ?? MAX_IDLE_MS;
    const maxBytes = options.maxUnusedBytes ?? MAX_UNUSED_BYTES;
    const maxCopies = options.maxUnusedCopies ?? MAX_UNUSED_COPIES;
    const root = this.trustedRoot();
    const users = new Map<string, number>();
    const keys: string[] = [];
    for (const name of readdirSync(root)) {
      const marker = MARKER.exec(name);
      const temp = TEMP.exec(name);
      if (marker?.[2] === "use") {
        if (isAlive(Number(marker[3]), marker[4]!)) users.set(marker[1]!, (users.get(marker[1]!) ?? 0) + 1);
        else rmSync(join(root, name), { force: true });
      } else if (temp) {
        // A live process is still building or removing it; a dead one left it behind.
        if (!isAlive(Number(temp[2]), temp[3]!)) rmSync(join(root, name), { recursive: true, force: true });
      } else if (KEY.test(name)) keys.push(name);
    }
    const result: CollectResult = { removed: [], inUse: [], kept: [] };
    const unused: { key: string; used: number }[] = [];
    for (const key of keys) {
      if (users.has(key)) result.inUse.push(key);
      else {
        const st = look(join(root, key));
        if (st) unused.push({ key, used: st.mtimeMs });
      }
    }
    unused.sort((a, b) => b.used - a.used);
    let bytes = 0;
    for (const { key, used } of unused) {
      const size = this.#trusted(key) ? treeBytes(join(root, key)) : Infinity;
      bytes += size;
      if (Date.now() - used <= maxIdle && bytes <= maxBytes && result.kept.length < maxCopies) result.kept.push(key);
      else if (this.#remove(key)) result.removed.push(key);
      else result.inUse.push(key);
    }
    return result;
  }

  /** Removes `key` unless a live process uses it (see the header for why the order matters). */
  #remove(key: string): boolean {
    const claim = join(this.root, `${key}.gc.${this.#me}`);
    try {
      writeFileSync(claim, "", { flag: "wx", mode: 0o644 });
    } catch {
      return false; // another collector is on it
    }
    try {
      for (const name of readdirSync(this.root)) {
        const m = MARKER.exec(name);
        if (m && m[1] === key && m[2] === "use" && isAlive(Number(m[3]), m[4]!)) return false;
      }
      const trash = join(this.root, `.trash.${key}.${this.#me}.${this.#counter++}`);
      renameSync(join(this.root, key), trash);
      unlinkSync(claim);
      rmSync(trash, { recursive: true, force: true });
      return true;
    } finally {
      rmSync(claim, { force: true });
    }
  }

  /** Drops this thread's markers (copies stay for the next process) and collects. Never throws. */
  release(options?: CollectOptions): void {
    const now = new Date();
    for (const key of this.#held) {
      try {
        utimesSync(join(this.root, key), now, now);
        rmSync(join(this.root, `${key}.use.${this.#me}`), { force: true });
      } catch {
        // the store is gone or unwritable: the marker dies with this process anyway
      }
    }
    this.#held.clear();
    this.#collectQuietly(options);
  }

  #collectQuietly(options?: CollectOptions): void {
    try {
      this.collect(options);
    } catch {
      // Collecting is housekeeping: a failure leaves copies behind, never breaks a run.
    }
  }

  #hookExit(): void {
    if (this.#exitHook) return;
    this.#exitHook = true;
    process.once("exit", () => this.release());
  }
}
