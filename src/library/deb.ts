// Getting the .deb files the lock names and unpacking them, without touching the system: `apt-get
// download NAME=VERSION` (no root needed, nothing installed, the archive's signed index vouches for
// the file) or a directory the user filled by hand (air-gapped machines), then `dpkg-deb -x` into a
// private directory. The lock's sha256 is checked before anything is unpacked.

import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ChecksumError, SetupError } from "../core/errors.ts";
import { debFileName, type LockedPackage } from "./lock.ts";
import { isTestDir, sha256File, treeEntries, treeHash, type TreeEntry } from "./tree.ts";

const run = promisify(execFile);

/** Puts every package's .deb into `dir`: copied from `from`, or downloaded with apt. */
export async function fetchDebs(packages: readonly LockedPackage[], dir: string, from?: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  if (from !== undefined) {
    for (const p of packages) {
      const src = join(from, debFileName(p));
      if (!existsSync(src)) throw new SetupError(`${debFileName(p)} (${p.name} ${p.version}) is not in ${from}`);
      copyFileSync(src, join(dir, debFileName(p)));
    }
    return;
  }
  const wanted = packages.filter((p) => !existsSync(join(dir, debFileName(p))));
  if (wanted.length === 0) return;
  try {
    // One apt call for all: it fetches in parallel. The names and versions were validated by the lock schema.
    await run("apt-get", ["download", "-q", ...wanted.map((p) => `${p.source.debian}=${p.source.version}`)], {
      cwd: dir,
      maxBuffer: 4 << 20,
    });
  } catch (error) {
    const e = error as { stderr?: string; code?: unknown; message: string };
    if (e.code === "ENOENT")
      throw new SetupError("apt-get is not installed: download the .deb files elsewhere and use --from DIR");
    throw new SetupError(`apt-get download failed: ${(e.stderr ?? e.message).trim().slice(0, 2000)}`, { cause: error });
  }
  for (const p of wanted) {
    if (!existsSync(join(dir, debFileName(p))))
      throw new SetupError(`apt-get download did not produce ${debFileName(p)} for ${p.name}`);
  }
}

/** Throws ChecksumError when the .deb differs from what the lock says. */
export function verifyDeb(p: LockedPackage, path: string): void {
  const actual = sha256File(path);
  if (actual !== p.source.sha256)
    throw new ChecksumError(`${p.source.debian} ${p.source.version}`, ".deb", p.source.sha256, actual);
}

export interface Unpacked {
  /** The library subtree of the package, unpacked (a private temporary directory; caller removes `tmp`). */
  dir: string;
  tmp: string;
  entries: TreeEntry[];
  installedSha256: string;
}

/** Unpacks the .deb and returns its library subtree (tests left out) with its tree hash. */
export async function unpackDeb(debPath: string, root: string, tmpParent: string): Promise<Unpacked> {
  const tmp = mkdtempSync(join(tmpParent, "unpack-"));
  try {
    await run("dpkg-deb", ["-x", debPath, tmp], { maxBuffer: 4 << 20 });
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    const e = error as { stderr?: string; code?: unknown; message: string };
    if (e.code === "ENOENT") throw new SetupError("dpkg-deb is not installed (Debian: apt-get install dpkg)");
    throw new SetupError(`dpkg-deb could not unpack ${debPath}: ${(e.stderr ?? e.message).trim().slice(0, 500)}`);
  }
  const dir = join(tmp, root);
  const entries = existsSync(dir) ? treeEntries(dir, isTestDir) : [];
  return { dir, tmp, entries, installedSha256: treeHash(entries) };
}
