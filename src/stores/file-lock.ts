// A session lock that holds across processes on one machine, for the disk store: a lock file whose
// modification time is the moment its lease ends (in the future while it is held), so any process can
// tell a held lock from one whose holder died or stalled, with no clock but the machine's.
//
// - Taking: the lock file is written whole under a name of its own (a random token inside, the lease
//   end as its mtime) and then link()ed to the lock's path, which fails if a lock is there: a lock file
//   is never seen without its lease, so a fresh lock can never look lapsed.
// - Taking over a lapsed lock: the taker first claims that lock (a link named after its token, so
//   exactly one taker per lapsed lock wins), checks under the claim that it is still the same lapsed
//   file, and renames its own ready file over it: the path is never empty, so no third process can
//   slip a lock of its own in between.
// - A holder knows its file by its token (not its inode: a new file may reuse a freed one), keeps no
//   descriptor open, and never renews a lease with less than a second (or a third of a shorter
//   lease) left, so a taker that judged it lapsed stays right; release removes the file only while it
//   holds the holder's token, and leaves a lapsed one alone.
// What is not blocked: a renewal that the file system call itself delays past that margin (the
// holder and a taker then both hold until the holder's next extend reports it lost: the window
// callers already treat as "lost before saving"); a taker that dies holding a claim and a second
// one clearing it while a third claims anew (a crash inside a takeover, racing two others); and
// directories on network file systems whose clocks differ from this machine's.

import { createHash, randomBytes } from "node:crypto";
import { link, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import type { SessionLock } from "./store.ts";

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;
const unique = (path: string, what: string) => `${path}.${randomBytes(6).toString("hex")}.${what}`;

/** Takes the lock at `path` for `ttlMs`, or undefined when another holder (any process) has it. */
export async function takeFileLock(path: string, ttlMs: number): Promise<SessionLock | undefined> {
  const token = `${process.pid} ${randomBytes(16).toString("hex")}\n`;
  const ready = unique(path, "new");
  try {
    // A few rounds: each lost race (the file vanished or was replaced between two calls) is tried again.
    for (let round = 0; round < 4; round++) {
      const until = Date.now() + ttlMs;
      await writeFile(ready, token, { mode: 0o600 });
      await utimes(ready, new Date(), new Date(until));
      try {
        await link(ready, path);
        return new FileLock(path, token, until, ttlMs);
      } catch (error) {
        if (errno(error) !== "EEXIST") throw error;
      }
      const held = await look(path);
      if (!held) continue; // released meanwhile: try again
      if (held.until > Date.now()) return undefined;
      const took = await takeOver(path, held.token, ready);
      if (took === "held") return undefined;
      if (took === "taken") return new FileLock(path, token, until, ttlMs);
    }
    return undefined;
  } finally {
    await rm(ready, { force: true });
  }
}

/** The lock file's token and lease end, or undefined when there is none. */
async function look(path: string): Promise<{ token: string; until: number } | undefined> {
  try {
    const [token, seen] = await Promise.all([readFile(path, "utf8"), stat(path)]);
    return { token, until: seen.mtimeMs };
  } catch (error) {
    if (errno(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Replaces the lapsed lock whose token is `stale` with `ready`. Only one taker per lapsed lock gets
 * this far: the claim on that lock (a link named after its token, itself leased like a lock) is
 * exclusive, and under it the file at `path` can change no more (its holder lapsed and touches it no
 * more; any other taker lost the claim). A claim whose taker died is stale after its lease and is
 * cleared for the next taker.
 */
async function takeOver(path: string, stale: string, ready: string): Promise<"taken" | "held" | "retry"> {
  const claim = `${path}.${createHash("sha256").update(stale).digest("hex").slice(0, 16)}.claim`;
  try {
    await link(ready, claim);
  } catch (error) {
    if (errno(error) !== "EEXIST") throw error;
    const other = await stat(claim).catch(() => undefined);
    if (other && other.mtimeMs > Date.now()) return "held"; // another taker is at it
    await rm(claim, { force: true }); // its taker died mid-way
    return "retry";
  }
  try {
    const now = await look(path);
    if (!now || now.token !== stale || now.until > Date.now()) return "retry";
    await rename(ready, path); // atomic: the lapsed file is replaced, never absent
    return "taken";
  } finally {
    await rm(claim, { force: true });
  }
}

class FileLock implements SessionLock {
  readonly #path: string;
  readonly #token: string;
  #until: number;
  readonly #ttlMs: number;
  #released = false;

  constructor(path: string, token: string, until: number, ttlMs: number) {
    this.#path = path;
    this.#token = token;
    this.#until = until;
    this.#ttlMs = ttlMs;
  }

  /** How much lease must be left for a renewal: a second, or a third of a shorter lease. */
  get #margin(): number {
    return Math.min(1000, this.#ttlMs / 3);
  }

  /** Whether the file at `path` holds this lock's token. */
  async #mine(path = this.#path): Promise<boolean> {
    return (await readFile(path, "utf8").catch(() => undefined)) === this.#token;
  }

  async extend(ttlMs: number): Promise<boolean> {
    // Near the end of its lease a holder may be judged lapsed by the time its touch lands: it never
    // renews with less than the margin left (its callers renew every third of the lease).
    if (this.#released || Date.now() >= this.#until - this.#margin) return false;
    const until = Date.now() + ttlMs;
    try {
      await utimes(this.#path, new Date(), new Date(until));
    } catch {
      return false;
    }
    // Checked after the touch: a touch that landed on a taker's file (this holder was taken over)
    // only lengthened the taker's lease, and this reports the lock lost.
    if (!(await this.#mine())) return false;
    this.#until = until;
    return true;
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // A lock near or past the end of its lease is left to lapse: a taker may be taking it over now.
    if (Date.now() >= this.#until - this.#margin) return;
    const aside = unique(this.#path, "release");
    try {
      await rename(this.#path, aside);
    } catch (error) {
      if (errno(error) === "ENOENT") return; // taken over and released by someone else
      throw error;
    }
    // Not ours (we lapsed and someone took it): put theirs back.
    if (!(await this.#mine(aside))) await link(aside, this.#path).catch(() => undefined);
    await rm(aside, { force: true });
  }
}
