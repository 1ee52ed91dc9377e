// Tree hashes: one sha256 over a directory's files (relative path and content hash of each, in byte
// order of the path), so "what is installed" has one checksum in the lock and one in the manifest.
// Only regular files and directories are allowed: a symlink in the library could point the guest's
// import at any file, so a package that ships one is refused rather than followed.

import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SetupError } from "../core/errors.ts";

export interface TreeEntry {
  /** Relative, '/'-separated. */
  path: string;
  sha256: string;
  size: number;
}

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function sha256File(path: string): string {
  return sha256Of(readFileSync(path));
}

/** Every regular file under `dir`, sorted; `skip(relativePath, isDir)` leaves entries out. */
export function treeEntries(dir: string, skip: (path: string, isDir: boolean) => boolean = () => false): TreeEntry[] {
  const out: TreeEntry[] = [];
  const walk = (rel: string): void => {
    const names = readdirSync(join(dir, rel)).sort();
    for (const name of names) {
      const childRel = rel ? `${rel}/${name}` : name;
      const full = join(dir, childRel);
      const st = lstatSync(full);
      if (st.isDirectory()) {
        if (!skip(childRel, true)) walk(childRel);
      } else if (st.isFile()) {
        if (!skip(childRel, false)) out.push({ path: childRel, sha256: sha256File(full), size: st.size });
      } else {
        throw new SetupError(`${full} is not a regular file or directory (symlinks and devices are refused)`);
      }
    }
  };
  walk("");
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

export function treeHash(entries: readonly TreeEntry[]): string {
  const hash = createHash("sha256");
  for (const e of entries) hash.update(`${e.sha256}  ${e.path}\n`);
  return hash.digest("hex");
}

/** Test suites are left out of the library: a third of the bytes, never imported by the packages. */
export function isTestDir(path: string, isDir: boolean): boolean {
  return isDir && /(^|\/)tests$/.test(path);
}
