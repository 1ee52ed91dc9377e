// Where the package library lives once `wasmcell setup` built it, and the quick look the engines take
// before mounting it: `<cache>/packages-<lock digest>/` holding `site/` (the files, read-only),
// `files.sha256` (every file's hash, for `--check`) and `manifest.json` (what setup did). The directory
// name carries the lock's digest, so a library built from another lock is never mounted.

import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { cacheDir, leaseEntry } from "./cache.ts";
import { loadLock, type LoadedLock } from "./lock.ts";

export interface ManifestPackage {
  name: string;
  version: string;
  debian: string;
  debianVersion: string;
  debSha256: string;
  installedSha256: string;
}

export interface Manifest {
  manifestVersion: 1;
  lockDigest: string;
  createdAt: string;
  wasmcellVersion: string;
  packages: ManifestPackage[];
  /** Modules imported before the Pyodide snapshot was taken. */
  preload: string[];
  /** site/: regular files, total bytes, tree hash (files.sha256 lists each). */
  files: { count: number; bytes: number; treeSha256: string };
  /** .pyc files compiled per interpreter (Pyodide's CPython, the native tier's python3). */
  compiled: { pyodide: number; native: number };
  /** Where the time went, in milliseconds. */
  steps: Record<string, number>;
}

export interface InstalledLibrary {
  dir: string;
  site: string;
  manifest: Manifest;
}

export function libraryDir(lockDigest: string, cache = cacheDir()): string {
  return join(cache, `packages-${lockDigest.slice(0, 16)}`);
}

/** Which modules the snapshot imports from the library (the lock's `preload` packages). */
export function libraryPreload(lock: LoadedLock["lock"]): string[] {
  return lock.packages.filter((p) => p.preload).flatMap((p) => p.imports);
}

/**
 * The installed library for the shipped lock (or `lock`), or undefined when setup has not run.
 * Cheap (two stats, one small read): the full verification is `wasmcell setup --check`. Only a
 * directory owned by this user that nobody else can write is used: a planted library would run as
 * the guest's imports.
 */
export function installedLibrary(options: { cache?: string; lock?: LoadedLock } = {}): InstalledLibrary | undefined {
  let lock: LoadedLock;
  try {
    lock = options.lock ?? loadLock();
  } catch {
    return undefined;
  }
  const dir = libraryDir(lock.digest, options.cache);
  try {
    for (const path of [dir, join(dir, "manifest.json")]) {
      const st = statSync(path);
      if (typeof process.getuid === "function" && st.uid !== process.getuid()) return undefined;
      if ((st.mode & 0o022) !== 0) return undefined;
    }
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
    if (manifest.manifestVersion !== 1 || manifest.lockDigest !== lock.digest) return undefined;
    return { dir, site: join(dir, "site"), manifest };
  } catch {
    return undefined;
  }
}

/**
 * The installed library, leased for this process's life (an engine mounts it into every sidecar or
 * jail): another install's eviction leaves it alone, and its last use is now.
 */
export function leasedLibrary(): InstalledLibrary | undefined {
  const library = installedLibrary();
  if (library) leaseEntry(dirname(library.dir), basename(library.dir), library.dir);
  return library;
}

/** The top-level modules the installed library offers (what a model may import), or undefined without one. */
export function installedImports(): string[] | undefined {
  let lock: LoadedLock;
  try {
    lock = loadLock();
  } catch {
    return undefined; // no readable lock: no library either (the engines say so when they start)
  }
  if (!installedLibrary({ lock })) return undefined;
  return [...new Set(lock.lock.packages.flatMap((p) => p.imports.filter((name) => !name.includes("."))))];
}
