// Runtime files the drop uid cannot reach where they are installed. The uid drop happens before
// bubblewrap (setpriv, then bwrap as that uid), so bubblewrap can bind only what uid 65534 can see — and
// a checkout or node_modules under a 0700 directory (/root/project, `mktemp -d`) is invisible to it.
// Such a file or tree is handed to the jail as a staged copy instead: copied once into a directory
// owned by the host user that the drop uid may read but nobody else may write, keyed by a hash of every
// file's path, size, mode and mtime (a changed install gets a new copy), and bound at the same jail
// path. The copies live in a StageStore (stage-store.ts): shared by this user's processes, held by each
// process that uses one until it exits, and removed once nobody uses them and they are idle or past
// the store's byte budget. The staging root is refused if anyone but the host user could have
// planted files in it.
//
// Only the package's own runtime files are staged — files of the wasmcell install itself, of the
// node_modules its dependencies are installed in, and the Node binary running it: code that is public
// anyway. Anything else a host binds (its own data under a private directory) is never copied to a
// place other users can read; such a bind is refused, naming the path, as before.

import { createHash } from "node:crypto";
import { chmodSync, cpSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { StageStore } from "./stage-store.ts";

/**
 * Where staged copies live: /var/tmp is searchable by every uid, sticky (nobody can rename our
 * directory away) and survives reboots' /tmp cleaning. (`wasmcell-stage-<uid>` was an earlier layout
 * without in-use markers: nothing here removes it, since processes of that version cannot say whether
 * they still use it.)
 */
export const STAGE_ROOT = `/var/tmp/wasmcell-staged-${process.geteuid?.() ?? 0}`;

/** The store of this process's staged copies. */
export const stageStore = new StageStore(STAGE_ROOT);

let runtimeRoots: string[] | undefined;

/** The directories whose files are the package's own code (see the header), real paths. */
function roots(): string[] {
  if (runtimeRoots) return runtimeRoots;
  const found = [fileURLToPath(new URL("../..", import.meta.url))];
  try {
    // The node_modules holding the dependencies (pyodide is bound into the sidecar's jail).
    found.push(dirname(dirname(createRequire(import.meta.url).resolve("pyodide/package.json"))));
  } catch {
    // pyodide not installed: nothing of it to bind either
  }
  runtimeRoots = found.map((d) => realpathSync(d));
  return runtimeRoots;
}

/** Whether `path` is the package's own runtime code (may be staged), not a host's own data. */
export function isRuntimeFile(path: string): boolean {
  try {
    const real = realpathSync(path);
    if (real === realpathSync(process.execPath)) return true;
    return roots().some((root) => real === root || real.startsWith(root + sep));
  } catch {
    return false;
  }
}

/** The content key of `path`: its path and every file's relative path, mode, size and mtime. */
export function fingerprint(path: string): string {
  // "named": copies keep their file name (an earlier layout called every copy "x").
  const hash = createHash("sha256").update(`named\0${path}`);
  const walk = (p: string) => {
    const st = statSync(p);
    hash.update(`\0${relative(path, p)}\0${st.mode}\0${st.size}\0${st.mtimeMs}`);
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) walk(join(p, name));
  };
  walk(path);
  return hash.digest("hex").slice(0, 32);
}

/** Read for everyone, write for the owner only; executables stay executable. */
function openUp(p: string): void {
  const st = lstatSync(p);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(p, 0o755);
    for (const name of readdirSync(p)) openUp(join(p, name));
  } else {
    chmodSync(p, st.mode & 0o111 ? 0o755 : 0o644);
  }
}

const staged = new Map<string, string>();

/**
 * A copy of `path` (a file or a directory tree, symlinks followed) that every uid can read, made once
 * per content fingerprint and shared with this user's other processes. Returns the staged path; bind
 * it where `path` would have been bound. The copy stays while this process runs.
 */
export function stageReadable(path: string, store: StageStore = stageStore): string {
  const key = fingerprint(path);
  const cached = staged.get(`${store.root}\0${path}\0${key}`);
  if (cached) return cached;
  // The copy keeps its name: a program run unjailed finds a staged module by name (harness.py).
  const name = basename(path) || "x";
  const dir = store.acquire(key, (building) => {
    cpSync(path, join(building, name), { recursive: true, dereference: true });
    openUp(building);
  });
  const final = join(dir, name);
  staged.set(`${store.root}\0${path}\0${key}`, final);
  return final;
}
