// The check an engine makes before it mounts the package library: the installed tree still matches
// what `wasmcell setup` recorded, or the engine refuses it with an IntegrityError naming the file.
// `setup --check` re-hashes every file (~150 MB, seconds); this has to be cheap enough for every
// createSandbox, so it re-hashes only files whose stat moved since they were last verified.
//
// The records, all written by setup inside the library's directory:
// - `files.sha256`: every file's sha256; its own digest is `manifest.json`'s `files.treeSha256`, so the
//   listing cannot be edited without the manifest;
// - `stamps.json`: each file's size, mtime, ctime and inode when its hash was last verified.
//
// What is detected: a file changed, added, removed, or replaced by a symlink or anything else than a
// regular file. A write, truncate, chmod or utime sets the file's ctime (the kernel does; user space
// cannot set it back), and a replacement has another inode, so a changed file has a changed stamp and
// is re-hashed against `files.sha256`. A copied or restored cache (new inodes) is re-hashed once in
// full, then its stamps are written again.
// What is not: a change that rewrites the content *and* all three records consistently (someone with
// the cache owner's rights can do that: protect the cache directory as you would the code itself), or
// a write below the file system (a raw block device, a clock set back to forge ctime).

import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IntegrityError } from "../core/errors.ts";
import type { EventInput } from "../core/events.ts";
import type { EngineName } from "../core/types.ts";
import type { InstalledLibrary } from "./library.ts";
import { sha256File } from "./tree.ts";

/** size, mtimeMs, ctimeMs, ino of a file when its hash was last verified. */
type Stamp = [number, number, number, number];

export const STAMPS_FILE = "stamps.json";

const stampOf = (st: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): Stamp => [
  st.size,
  st.mtimeMs,
  st.ctimeMs,
  st.ino,
];
const same = (a: Stamp | undefined, b: Stamp) =>
  a !== undefined && a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];

function readStamps(dir: string): Map<string, Stamp> {
  try {
    const raw = JSON.parse(readFileSync(join(dir, STAMPS_FILE), "utf8")) as unknown;
    if (typeof raw !== "object" || raw === null) return new Map();
    const out = new Map<string, Stamp>();
    for (const [path, v] of Object.entries(raw)) {
      if (Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === "number")) out.set(path, v as Stamp);
    }
    return out;
  } catch {
    return new Map();
  }
}

/** Records the stamps of a tree whose hashes were just verified (setup, or a check that re-hashed). */
export function writeStamps(dir: string, stamps: ReadonlyMap<string, Stamp>): void {
  const tmp = join(dir, `${STAMPS_FILE}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(stamps)), { mode: 0o644 });
    renameSync(tmp, join(dir, STAMPS_FILE));
  } catch {
    // A read-only cache: the next check re-hashes again, which is slower but no less strict.
  }
}

/** Every file's stamp under `site` (for setup, right after it hashed them). */
export function stampTree(site: string): Map<string, Stamp> {
  const out = new Map<string, Stamp>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(site, rel), { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(childRel);
      else if (entry.isFile()) out.set(childRel, stampOf(lstatSync(join(site, childRel))));
    }
  };
  walk("");
  return out;
}

/** Throws IntegrityError naming the first file that does not match setup's record. */
export function verifyLibrary(library: InstalledLibrary): { rehashed: number } {
  const listingPath = join(library.dir, "files.sha256");
  let listing: Buffer;
  try {
    listing = readFileSync(listingPath);
  } catch {
    throw new IntegrityError(listingPath, "is missing");
  }
  const digest = createHash("sha256").update(listing).digest("hex");
  if (digest !== library.manifest.files.treeSha256)
    throw new IntegrityError(listingPath, `does not match manifest.json (sha256 ${digest})`);
  const recorded = new Map<string, string>();
  for (const line of listing.toString("utf8").split("\n")) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (m) recorded.set(m[2]!, m[1]!);
  }
  const stamps = readStamps(library.dir);
  const seen = new Map<string, Stamp>();
  let rehashed = 0;
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(library.site, rel), { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(library.site, childRel);
      if (entry.isDirectory()) {
        walk(childRel);
        continue;
      }
      if (!entry.isFile()) throw new IntegrityError(full, "is not a regular file (a symlink or device was planted)");
      const expected = recorded.get(childRel);
      if (expected === undefined) throw new IntegrityError(full, "was added after setup");
      const stamp = stampOf(lstatSync(full));
      if (!same(stamps.get(childRel), stamp)) {
        rehashed++;
        const actual = sha256File(full);
        if (actual !== expected)
          throw new IntegrityError(full, `was modified after setup (sha256 ${actual}, recorded ${expected})`);
      }
      seen.set(childRel, stamp);
    }
  };
  walk("");
  for (const path of recorded.keys())
    if (!seen.has(path)) throw new IntegrityError(join(library.site, path), "was removed after setup");
  if (rehashed > 0) writeStamps(library.dir, seen);
  return { rehashed };
}

/**
 * The check an engine awaits before its first run: a library that does not match its record is
 * refused, with an `integrity` event and then the IntegrityError.
 */
export async function checkLibrary(
  library: InstalledLibrary,
  engine: EngineName,
  emit?: (event: EventInput) => void,
): Promise<void> {
  // One turn of the event loop first: a sidecar being launched gets spawned before the check takes
  // the thread (synchronous stats: the promise API measured 3× the CPU for the same 6,000 files).
  await new Promise((resolve) => setTimeout(resolve, 0));
  try {
    verifyLibrary(library);
  } catch (error) {
    if (error instanceof IntegrityError)
      emit?.({ type: "integrity", engine, file: error.file, action: "refused", message: error.message });
    throw error;
  }
}
