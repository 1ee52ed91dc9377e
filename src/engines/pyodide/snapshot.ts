// The Pyodide memory snapshot sidecars start from. Pyodide 314 can dump its WASM memory after load
// (`loadPyodide({_makeSnapshot: true})` + `makeMemorySnapshot()`, private API) and start from it
// (`_loadSnapshot`): ≈1 s to ready in a fresh process instead of ≈3–5 s. It is built once per
// machine in a sealed sidecar that never runs guest code, and kept in the user's cache directory
// (0700 directory, 0600 file, owner checked on read) so the next sandbox starts fast too.
// The key covers everything that shapes the memory image: Pyodide's version, the harness and the
// sidecar's folder, the modules imported before the snapshot and the package library mounted (if any).
// Pyodide itself rejects a snapshot from another build (it checks its build id).
//
// Before the snapshot is taken, the sidecar imports the standard-library modules agent code reaches
// for first and the library's `preload` packages: a stateless run starts from the checkpoint, so a
// module in the snapshot costs a run nothing, while one imported by the run costs it every time.

import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { ResolvedSeal } from "../../options.ts";
import type { InstalledLibrary } from "../../setup/library.ts";
import { sidecarFiles } from "./launch.ts";
import { buildSnapshot } from "./sidecar-client.ts";

const inMemory = new Map<string, Promise<Uint8Array>>();

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
}

function snapshotPreload(library: InstalledLibrary | undefined): string[] {
  return [...STDLIB_PRELOAD, ...(library?.manifest.preload ?? [])];
}

export function snapshotKey(library?: InstalledLibrary): string {
  const files = sidecarFiles();
  const hash = createHash("sha256");
  hash.update(readFileSync(join(files.pyodideDir, "package.json")));
  hash.update(readFileSync(files.harness));
  // The sidecar's folder: its modules and the Python it runs before the snapshot is taken.
  for (const name of readdirSync(files.sidecarDir).sort()) {
    const path = join(files.sidecarDir, name);
    if (statSync(path).isFile()) hash.update(`${name}\0`).update(readFileSync(path));
  }
  hash.update(JSON.stringify(snapshotPreload(library)));
  hash.update(library ? `${library.manifest.lockDigest} ${library.manifest.files.treeSha256}` : "no library");
  return hash.digest("hex").slice(0, 24);
}

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

export function snapshotPath(key: string, cache = cacheDir()): string {
  return join(cache, `pyodide-${key}.snapshot`);
}

/** Only a file we own that nobody else can write: a planted snapshot would run as the interpreter. */
function usable(path: string): boolean {
  try {
    const st = statSync(path);
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return false;
    return (st.mode & 0o022) === 0 && st.isFile();
  } catch {
    return false;
  }
}

function readCached(path: string): Uint8Array | undefined {
  try {
    return usable(path) ? new Uint8Array(readFileSync(path)) : undefined;
  } catch {
    return undefined;
  }
}

function writeCached(path: string, bytes: Uint8Array): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o600 });
    renameSync(tmp, path);
    // Two snapshots are enough (with and without the package library); older ones (other Pyodide,
    // wasmcell or library versions) are 30+ MB each.
    const others = readdirSync(dir)
      .filter((name) => /^pyodide-[0-9a-f]+\.snapshot$/.test(name) && join(dir, name) !== path)
      .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const old of others.slice(1)) rmSync(old.path, { force: true });
  } catch {
    // No writable cache directory: the snapshot lives in memory for this process only.
  }
}

// A cold build measured 25–50 s on a loaded 2-core machine (more with the library's imports).
const BUILD_ESTIMATE_MS = 30_000;
const LIBRARY_BUILD_ESTIMATE_MS = 15_000;

export function snapshotBuildEstimateMs(library: InstalledLibrary | undefined): number {
  return BUILD_ESTIMATE_MS + (library ? LIBRARY_BUILD_ESTIMATE_MS : 0);
}

/** The snapshot for this build, from memory, the disk cache, or built now. */
export function getSnapshot(options: SnapshotOptions): Promise<Uint8Array> {
  const key = snapshotKey(options.library);
  const path = snapshotPath(key, options.cache);
  let hit = inMemory.get(path);
  if (!hit) {
    hit = (async () => {
      const cached = readCached(path);
      if (cached) return cached;
      const built = await buildSnapshot({
        seal: options.seal,
        processMemoryMb: options.processMemoryMb,
        library: options.library?.site,
        preload: snapshotPreload(options.library),
        signal: options.signal,
      });
      writeCached(path, built);
      return built;
    })();
    hit.catch(() => inMemory.delete(path));
    inMemory.set(path, hit);
  }
  return hit;
}

/** Whether the snapshot for this build is on disk already (no build on the first run). */
export function snapshotCached(library: InstalledLibrary | undefined, cache?: string): boolean {
  return usable(snapshotPath(snapshotKey(library), cache));
}
