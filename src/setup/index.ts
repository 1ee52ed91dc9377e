// `wasmcell setup` / `setup()`: installs the package library the lock names and builds the Pyodide
// snapshot the first run starts from, so no request ever pays for either.
//
// 1. fetch: `apt-get download NAME=VERSION` for every package (no root, nothing installed on the
//    system), or copy from `from` (an air-gapped machine's directory of .deb files);
// 2. verify: each .deb's sha256 against the lock, then each unpacked tree's hash against the lock —
//    a mismatch is a ChecksumError naming the package and both checksums;
// 3. build `site/` (test suites left out), precompile it for Pyodide's CPython and the native python3;
// 4. record: `files.sha256` (every file) and `manifest.json` (what was installed, how long each step took);
// 5. snapshot: a sealed sidecar mounts the new library, imports the standard-library modules and the
//    lock's `preload` packages, and dumps its memory (the cache key covers the library's tree hash).
// Everything is staged in a private directory inside the cache and renamed into place at the end:
// an error at any step leaves the previous state (or nothing), never half a library.

import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { ChecksumError, SetupError } from "../core/errors.ts";
import {
  cacheDir,
  getSnapshot,
  snapshotCached,
  snapshotKey,
  snapshotPath,
  snapshotProblem,
} from "../engines/pyodide/boot-image.ts";
import { resolveOptions, type SealOptions } from "../options/index.ts";
import { packageVersion } from "../core/version.ts";
import { evictCache, evictionMessage, type Eviction } from "../library/cache.ts";
import { compileForNative, compileForPyodide } from "./compile.ts";
import { fetchDebs, unpackDeb, verifyDeb } from "../library/deb.ts";
import {
  installedLibrary,
  libraryDir,
  libraryPreload,
  type InstalledLibrary,
  type Manifest,
} from "../library/library.ts";
import { debFileName, loadLock, type LoadedLock } from "../library/lock.ts";
import { treeEntries, treeHash, type TreeEntry } from "../library/tree.ts";
import { stampTree, writeStamps } from "../library/verify.ts";

export { ChecksumError, SetupError } from "../core/errors.ts";
export type { InstalledLibrary, Manifest } from "../library/library.ts";

export interface SetupOptions {
  /** The cache to install into. @defaultValue `$WASMCELL_CACHE_DIR`, else `~/.cache/wasmcell` */
  cacheDir?: string;
  /** A directory holding the lock's .deb files (air-gapped machines); without it, apt-get downloads them. */
  from?: string;
  /** The lock to install. @defaultValue the packages.lock.json shipped with wasmcell */
  lockPath?: string;
  /** Rebuild even when the install is up to date. @defaultValue false */
  force?: boolean;
  /** Build the Pyodide snapshot too. @defaultValue true */
  snapshot?: boolean;
  /** The seal the snapshot-building sidecar runs under (as in createSandbox). @defaultValue every layer on */
  seal?: SealOptions;
  /** Progress, for a progress bar: `done` of `total` in `step`. */
  onProgress?: (progress: SetupProgress) => void;
}

export interface SetupProgress {
  /** `evict`: another install's or version's entry was removed to keep the cache under its budget. */
  step: "fetch" | "verify" | "compile" | "snapshot" | "evict" | "done";
  done: number;
  total: number;
  detail: string;
}

export interface SetupResult {
  status: "installed" | "up-to-date";
  dir: string;
  manifest: Manifest;
  /** The Pyodide snapshot built (or found) for this library, when `snapshot` was on. */
  snapshotPath?: string;
  ms: number;
}

export async function setup(options: SetupOptions = {}): Promise<SetupResult> {
  const started = performance.now();
  const cache = options.cacheDir ?? cacheDir();
  const lock = loadLock(options.lockPath);
  const progress = options.onProgress ?? (() => {});
  const wantSnapshot = options.snapshot ?? true;
  const seal = resolveOptions(options.seal ? { seal: options.seal } : {}).seal;

  const onEvicted = (e: Eviction) => progress({ step: "evict", done: 1, total: 1, detail: evictionMessage(e) });
  let library = options.force ? undefined : installedLibrary({ cache, lock });
  if (library && (!wantSnapshot || snapshotCached(library, cache))) {
    progress({ step: "done", done: 1, total: 1, detail: "up to date" });
    return {
      status: "up-to-date",
      dir: library.dir,
      manifest: library.manifest,
      ...(wantSnapshot ? { snapshotPath: snapshotPath(snapshotKey(library), cache) } : {}),
      ms: performance.now() - started,
    };
  }

  // 0711: the jails (which may run as an unprivileged uid) must traverse the cache to bind the library;
  // nobody else can list it, and the snapshots in it are 0600.
  mkdirSync(cache, { recursive: true, mode: 0o711 });
  const staging = mkdtempSync(join(cache, ".setup-"));
  chmodSync(staging, 0o755); // the library is not secret: the jail's uid reads it
  try {
    const steps: Record<string, number> = {};
    let built: InstalledLibrary | undefined;
    if (!library) {
      built = await buildLibrary(lock, staging, options.from, progress, steps);
      library = built;
    }
    let snapshotFile: string | undefined;
    if (wantSnapshot) {
      const t = performance.now();
      progress({ step: "snapshot", done: 0, total: 1, detail: "building the Pyodide snapshot" });
      await getSnapshot({ seal, processMemoryMb: 512, library, cache, onEvicted });
      snapshotFile = snapshotPath(snapshotKey(library), cache);
      if (!existsSync(snapshotFile)) throw new SetupError(`the snapshot could not be written to ${cache}`);
      steps.snapshot = performance.now() - t;
      progress({ step: "snapshot", done: 1, total: 1, detail: "snapshot built" });
    }
    if (built) {
      built.manifest.steps = { ...built.manifest.steps, ...steps };
      writeFileSync(join(staging, "manifest.json"), JSON.stringify(built.manifest, null, 2) + "\n", { mode: 0o644 });
      const final = libraryDir(lock.digest, cache);
      // A directory left by an older, broken install (installedLibrary refused it) goes first.
      if (existsSync(final)) rmSync(final, { recursive: true, force: true });
      renameSync(staging, final);
      library = { dir: final, site: join(final, "site"), manifest: built.manifest };
      evictCache(cache, { keep: [final, ...(snapshotFile ? [snapshotFile] : [])], onEvicted });
    }
    progress({ step: "done", done: 1, total: 1, detail: "installed" });
    return {
      status: "installed",
      dir: library.dir,
      manifest: library.manifest,
      ...(snapshotFile ? { snapshotPath: snapshotFile } : {}),
      ms: performance.now() - started,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

async function buildLibrary(
  loaded: LoadedLock,
  staging: string,
  from: string | undefined,
  progress: (p: SetupProgress) => void,
  steps: Record<string, number>,
): Promise<InstalledLibrary> {
  const { lock } = loaded;
  const total = lock.packages.length;
  const debs = join(staging, "debs");
  let t = performance.now();
  progress({ step: "fetch", done: 0, total, detail: from ? `copying from ${from}` : "apt-get download" });
  await fetchDebs(lock.packages, debs, from);
  steps.fetch = performance.now() - t;

  t = performance.now();
  const site = join(staging, "site");
  mkdirSync(site, { recursive: true });
  const owner = new Map<string, string>();
  for (const [i, p] of lock.packages.entries()) {
    progress({ step: "verify", done: i, total, detail: `${p.name} ${p.version}` });
    verifyDeb(p, join(debs, debFileName(p)));
    const unpacked = await unpackDeb(join(debs, debFileName(p)), lock.root, staging);
    try {
      if (unpacked.installedSha256 !== p.installedSha256)
        throw new ChecksumError(
          `${p.source.debian} ${p.source.version}`,
          "installed files",
          p.installedSha256,
          unpacked.installedSha256,
        );
      for (const e of unpacked.entries) {
        const other = owner.get(e.path);
        if (other) throw new SetupError(`${p.source.debian} and ${other} both install ${e.path}`);
        owner.set(e.path, p.source.debian);
        mkdirSync(dirname(join(site, e.path)), { recursive: true });
        copyFileSync(join(unpacked.dir, e.path), join(site, e.path), constants.COPYFILE_EXCL);
      }
    } finally {
      rmSync(unpacked.tmp, { recursive: true, force: true });
    }
  }
  rmSync(debs, { recursive: true, force: true });
  progress({ step: "verify", done: total, total, detail: "all checksums match" });
  steps.verify = performance.now() - t;

  t = performance.now();
  progress({ step: "compile", done: 0, total: 2, detail: "precompiling for Pyodide (CPython 3.14)" });
  const pyodide = await compileForPyodide(site);
  steps.compilePyodide = performance.now() - t;
  t = performance.now();
  progress({ step: "compile", done: 1, total: 2, detail: "precompiling for the native python3" });
  const native = await compileForNative(site);
  steps.compileNative = performance.now() - t;
  progress({ step: "compile", done: 2, total: 2, detail: "compiled" });

  makeReadOnly(site);
  const entries = treeEntries(site);
  writeFileSync(join(staging, "files.sha256"), listing(entries), { mode: 0o444 });
  // What each file's stat was when it was hashed: the engines' check at start re-hashes only what moved.
  writeStamps(staging, stampTree(site));
  const manifest: Manifest = {
    manifestVersion: 1,
    lockDigest: loaded.digest,
    createdAt: new Date().toISOString(),
    wasmcellVersion: packageVersion(),
    packages: lock.packages.map((p) => ({
      name: p.name,
      version: p.version,
      debian: p.source.debian,
      debianVersion: p.source.version,
      debSha256: p.source.sha256,
      installedSha256: p.installedSha256,
    })),
    preload: libraryPreload(lock),
    files: { count: entries.length, bytes: entries.reduce((n, e) => n + e.size, 0), treeSha256: treeHash(entries) },
    compiled: { pyodide, native },
    steps,
  };
  return { dir: staging, site, manifest };
}

/** Files 0444, directories 0755: nobody but the owner can change the tree, and the jails bind it read-only. */
function makeReadOnly(dir: string): void {
  for (const e of treeEntries(dir)) chmodSync(join(dir, e.path), 0o444);
}

function listing(entries: readonly TreeEntry[]): string {
  return entries.map((e) => `${e.sha256}  ${e.path}\n`).join("");
}

export interface CheckResult {
  ok: boolean;
  dir?: string;
  manifest?: Manifest;
  /** What is wrong, one line each (a modified, missing or extra file names the file). */
  problems: string[];
}

/** `wasmcell setup --check`: re-hashes every installed file against the install's record. */
export function checkSetup(options: Pick<SetupOptions, "cacheDir" | "lockPath" | "snapshot"> = {}): CheckResult {
  const cache = options.cacheDir ?? cacheDir();
  const lock = loadLock(options.lockPath);
  const library = installedLibrary({ cache, lock });
  if (!library) {
    return { ok: false, problems: [`no package library for this lock in ${cache} (run wasmcell setup)`] };
  }
  const problems: string[] = [];
  const recorded = new Map<string, string>();
  let listed: string;
  try {
    listed = readFileSync(join(library.dir, "files.sha256"), "utf8");
  } catch {
    listed = "";
    problems.push("files.sha256 is missing");
  }
  for (const line of listed.split("\n")) {
    const m = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (m) recorded.set(m[2]!, m[1]!);
  }
  const entries = treeEntries(library.site);
  const found = new Map(entries.map((e) => [e.path, e.sha256]));
  for (const [path, sha] of recorded) {
    const now = found.get(path);
    if (now === undefined) problems.push(`missing: site/${path}`);
    else if (now !== sha) problems.push(`modified: site/${path} (recorded sha256 ${sha}, now ${now})`);
  }
  for (const path of found.keys()) if (!recorded.has(path)) problems.push(`added: site/${path}`);
  if (treeHash(entries) !== library.manifest.files.treeSha256 && problems.length === 0)
    problems.push("the library's tree hash differs from manifest.json");
  if (options.snapshot ?? true) {
    const file = snapshotPath(snapshotKey(library), cache);
    if (!snapshotCached(library, cache))
      problems.push("the Pyodide snapshot for this library is missing (run wasmcell setup)");
    else {
      const problem = snapshotProblem(file);
      if (problem) problems.push(`modified: ${file} (${problem})`);
    }
  }
  return { ok: problems.length === 0, dir: library.dir, manifest: library.manifest, problems };
}
