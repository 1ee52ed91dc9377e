// The Pyodide memory snapshot sidecars start from. Pyodide 314 can dump its WASM memory after load
// (`loadPyodide({_makeSnapshot: true})` + `makeMemorySnapshot()`, private API) and start from it
// (`_loadSnapshot`): ≈1 s to ready in a fresh process instead of ≈3–5 s. It is built once per
// machine in a sealed sidecar that never runs guest code, and kept in the user's cache directory
// (0700 directory, 0600 file, owner checked on read, its sha256 recorded beside it and checked on
// every read: see Snapshot) so the next sandbox starts fast too.
// The key covers everything that shapes the memory image: Pyodide's version, the harness and the
// sidecar's folder, the modules imported before the snapshot and the package library mounted (if any).
// Pyodide itself rejects a snapshot from another build (it checks its build id).
//
// Before the snapshot is taken, the sidecar imports the standard-library modules agent code reaches
// for first and the library's `preload` packages: a stateless run starts from the checkpoint, so a
// module in the snapshot costs a run nothing, while one imported by the run costs it every time.

import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { EngineStartError } from "../../core/errors.ts";
import type { ResolvedSeal } from "../../options/index.ts";
import { cacheDir, evictCache, leaseEntry, type Eviction } from "../../library/cache.ts";
import type { InstalledLibrary } from "../../library/library.ts";
import { sidecarFiles, type SidecarFiles } from "./launch.ts";
import { buildSnapshot } from "./boot-image-build.ts";

/** Standard-library modules in every snapshot (with the library's `preload` packages after them). */
const STDLIB_PRELOAD: readonly string[] = Object.freeze([
  "json",
  "re",
  "datetime",
  "collections",
  "math",
  "statistics",
  "itertools",
  "functools",
  "decimal",
  "fractions",
  "string",
  "textwrap",
  "csv",
  "io",
  "random",
  "hashlib",
  "base64",
  "typing",
  "dataclasses",
  "enum",
  "copy",
  "operator",
  "heapq",
  "bisect",
  "time",
  "struct",
  "urllib.parse",
  "pathlib",
  "uuid",
]);

export interface SnapshotOptions {
  seal: ResolvedSeal;
  processMemoryMb: number;
  /** The package library to mount and preload (undefined: standard library only). */
  library?: InstalledLibrary | undefined;
  /** Where the snapshot is cached (default cacheDir()). */
  cache?: string | undefined;
  /** Aborting kills a build in progress (the promise rejects). */
  signal?: AbortSignal | undefined;
  /** Told when the cached snapshot did not match its record (it is then removed and rebuilt). */
  onRejected?: ((rejection: SnapshotRejection) => void) | undefined;
  /** The cache's size budget after a new snapshot is written (default cacheBudgetBytes()). */
  cacheBudgetBytes?: number | undefined;
  /** Told of each entry removed to bring the cache under its budget. */
  onEvicted?: ((eviction: Eviction) => void) | undefined;
}

function snapshotPreload(library: InstalledLibrary | undefined): string[] {
  return [...STDLIB_PRELOAD, ...(library?.manifest.preload ?? [])];
}

/**
 * The cache key: a hash of the content that shapes the memory image, never a path, so every install
 * of the same wasmcell and Pyodide (with the same package library) shares one snapshot. `files`: tests.
 */
export function snapshotKey(library?: InstalledLibrary, files: SidecarFiles = sidecarFiles()): string {
  const hash = createHash("sha256");
  hash.update(readFileSync(join(files.pyodideDir, "package.json")));
  hash.update(readFileSync(files.harness));
  hash.update(readFileSync(files.display));
  // The sidecar's folder: its modules and the Python it runs before the snapshot is taken.
  for (const name of readdirSync(files.sidecarDir).sort()) {
    const path = join(files.sidecarDir, name);
    if (statSync(path).isFile()) hash.update(`${name}\0`).update(readFileSync(path));
  }
  hash.update(JSON.stringify(snapshotPreload(library)));
  hash.update(library ? `${library.manifest.lockDigest} ${library.manifest.files.treeSha256}` : "no library");
  return hash.digest("hex").slice(0, 24);
}

export { cacheDir };

export function snapshotPath(key: string, cache = cacheDir()): string {
  return join(cache, `pyodide-${key}.snapshot`);
}

/**
 * A verified snapshot sidecars start from. Read once per process and checked against the sha256
 * recorded beside it when it was written (`<snapshot>.sha256`); then only its open descriptor is
 * kept, and each sidecar reads it from that descriptor inside its jail (no 38 MB copy through a
 * pipe per start). The file is replaced only by rename, so the verified inode's content changes only
 * by a write in place, which changes its ctime: each launch compares the descriptor's stat with the
 * verified one and re-hashes when it moved (`checkedSnapshot`). Without a writable cache the bytes
 * are held in memory and piped.
 */
export interface Snapshot {
  readonly bytes: number;
  readonly sha256: string;
  readonly source: { fd: number; path: string; stat: FileStamp } | { data: Uint8Array };
}

interface FileStamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** A snapshot file (or its record) that did not match what was recorded: it is removed and rebuilt. */
export interface SnapshotRejection {
  file: string;
  message: string;
}

const verified = new Map<string, Promise<Snapshot | undefined>>();
const building = new Map<string, Promise<Snapshot>>();

const stampOf = (st: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): FileStamp => ({
  size: st.size,
  mtimeMs: st.mtimeMs,
  ctimeMs: st.ctimeMs,
  ino: st.ino,
});
const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

/** Only a file we own that nobody else can write: a planted snapshot would run as the interpreter. */
function ownedPrivate(st: { uid: number; mode: number; isFile(): boolean }): boolean {
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) return false;
  return (st.mode & 0o022) === 0 && st.isFile();
}

function usable(path: string): boolean {
  try {
    return ownedPrivate(lstatSync(path));
  } catch {
    return false;
  }
}

export const recordPath = (snapshot: string) => `${snapshot}.sha256`;

/** The sha256 recorded for a snapshot file, or undefined when there is no well-formed, private record. */
function recordedSha256(path: string): string | undefined {
  const record = recordPath(path);
  if (!usable(record)) return undefined;
  try {
    return /^([0-9a-f]{64}) {2}\S+\n?$/.exec(readFileSync(record, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

function sha256Fd(fd: number, size: number): string {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(Math.min(size, 8 << 20) || 1);
  for (let offset = 0; offset < size;) {
    const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - offset), offset);
    if (n === 0) break;
    hash.update(chunk.subarray(0, n));
    offset += n;
  }
  return hash.digest("hex");
}

/**
 * Why the snapshot file at `path` may not be used (no record, a record that differs, not ours), or
 * undefined when it is fine. For `wasmcell setup --check`; the engines go through `loadSnapshot`.
 */
export function snapshotProblem(path: string): string | undefined {
  if (!usable(path)) return "missing, not a private file, or not owned by this user";
  const expected = recordedSha256(path);
  if (!expected) return "no recorded sha256 beside it";
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const actual = sha256Fd(fd, fstatSync(fd).size);
    return actual === expected ? undefined : `sha256 ${actual}, recorded ${expected}`;
  } finally {
    closeSync(fd);
  }
}

/** Opens and verifies the cached snapshot; a mismatch is reported, the file removed, and undefined returned. */
function readVerified(path: string, onRejected?: (r: SnapshotRejection) => void): Snapshot | undefined {
  if (!usable(path)) return undefined;
  const reject = (message: string): undefined => {
    onRejected?.({ file: path, message });
    rmSync(path, { force: true });
    rmSync(recordPath(path), { force: true });
    return undefined;
  };
  const expected = recordedSha256(path);
  if (!expected) return reject("the snapshot has no recorded sha256 (written by another version, or tampered with)");
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  const st = fstatSync(fd);
  if (!ownedPrivate(st)) {
    closeSync(fd);
    return undefined;
  }
  const actual = sha256Fd(fd, st.size);
  if (actual !== expected) {
    closeSync(fd);
    return reject(`the snapshot's sha256 is ${actual}, not the ${expected} recorded when it was written`);
  }
  return { bytes: st.size, sha256: actual, source: { fd, path, stat: stampOf(st) } };
}

/**
 * Writes a built snapshot and its record (each to a temporary name, then renamed: a reader never
 * sees half a file, and the inode a reader holds never changes) and returns it, by descriptor when
 * the cache could be written, else in memory.
 */
function writeCached(
  path: string,
  bytes: Uint8Array,
  budgetBytes: number | undefined,
  onEvicted: ((e: Eviction) => void) | undefined,
): Snapshot {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o600 });
    const fd = openSync(tmp, constants.O_RDONLY | constants.O_NOFOLLOW);
    writeFileSync(`${tmp}.sha256`, `${sha256}  ${basename(path)}\n`, { mode: 0o600 });
    renameSync(`${tmp}.sha256`, recordPath(path));
    renameSync(tmp, path);
    leaseEntry(dir, basename(path), recordPath(path));
    // Other installs' and versions' snapshots (30+ MB each) stay until the cache is over its budget,
    // and one a live process uses stays even then (src/library/cache.ts).
    evictCache(dir, { keep: [path], budgetBytes, onEvicted });
    return { bytes: bytes.length, sha256, source: { fd, path, stat: stampOf(fstatSync(fd)) } };
  } catch {
    // No writable cache directory: the snapshot lives in memory for this process only.
    return { bytes: bytes.length, sha256, source: { data: bytes } };
  }
}

/**
 * The snapshot as it may be handed to a sidecar now: its descriptor's stat still the verified one,
 * or its content re-hashed to the same sha256. Throws EngineStartError naming the file otherwise
 * (and forgets it, so the next start reads the cache again and rebuilds).
 */
export function checkedSnapshot(snapshot: Snapshot): Snapshot {
  const { source } = snapshot;
  if (!("fd" in source)) return snapshot;
  const st = fstatSync(source.fd);
  if (sameStamp(stampOf(st), source.stat)) return snapshot;
  const actual = sha256Fd(source.fd, st.size);
  if (actual === snapshot.sha256 && st.size === snapshot.bytes) {
    source.stat = stampOf(st);
    return snapshot;
  }
  verified.delete(source.path);
  closeSync(source.fd);
  throw new EngineStartError(
    `the Pyodide snapshot ${source.path} was changed after it was verified (sha256 ${actual}, recorded ${snapshot.sha256}); it is rebuilt on the next start`,
  );
}

// A cold build measured 25–50 s on a loaded 2-core machine (more with the library's imports).
const BUILD_ESTIMATE_MS = 30_000;
const LIBRARY_BUILD_ESTIMATE_MS = 15_000;

export function snapshotBuildEstimateMs(library: InstalledLibrary | undefined): number {
  return BUILD_ESTIMATE_MS + (library ? LIBRARY_BUILD_ESTIMATE_MS : 0);
}

/**
 * The cached snapshot for this build, verified against its record, or undefined when there is none
 * (or it did not match: `onRejected` is told, the file removed, and the caller builds a new one).
 */
export function loadSnapshot(options: SnapshotOptions): Promise<Snapshot | undefined> {
  const path = snapshotPath(snapshotKey(options.library), options.cache);
  // Leased before it is opened: an eviction in another process either sees the lease or has removed
  // the file already (then this reads nothing and builds).
  leaseEntry(dirname(path), basename(path), recordPath(path));
  let hit = verified.get(path);
  if (!hit) {
    hit = Promise.resolve().then(() => readVerified(path, options.onRejected));
    verified.set(path, hit);
    void hit.then(
      (s) => s || verified.delete(path),
      () => verified.delete(path),
    );
  }
  return hit;
}

/** The snapshot for this build, from this process, the disk cache (verified), or built now. */
export async function getSnapshot(options: SnapshotOptions): Promise<Snapshot> {
  const loaded = await loadSnapshot(options);
  if (loaded) return loaded;
  const path = snapshotPath(snapshotKey(options.library), options.cache);
  let build = building.get(path);
  if (!build) {
    build = (async () => {
      const bytes = await buildSnapshot({
        seal: options.seal,
        processMemoryMb: options.processMemoryMb,
        library: options.library?.site,
        preload: snapshotPreload(options.library),
        signal: options.signal,
      });
      const snapshot = writeCached(path, bytes, options.cacheBudgetBytes, options.onEvicted);
      verified.set(path, Promise.resolve(snapshot));
      return snapshot;
    })();
    building.set(path, build);
    void build.then(
      () => building.delete(path),
      () => building.delete(path),
    );
  }
  return build;
}

/** Whether the snapshot for this build is on disk with its record (no build on the first run). */
export function snapshotCached(library: InstalledLibrary | undefined, cache?: string): boolean {
  const path = snapshotPath(snapshotKey(library), cache);
  return usable(path) && recordedSha256(path) !== undefined;
}
