// The Pyodide memory snapshot sidecars start from. Pyodide 314 can dump its WASM memory after load
// (`loadPyodide({_makeSnapshot: true})` + `makeMemorySnapshot()`, private API) and start from it
// (`_loadSnapshot`): ≈1 s to ready in a fresh process instead of ≈3–5 s. It is built once per
// machine in a sealed sidecar that never runs guest code, and kept in the user's cache directory
// (0700 directory, 0600 file, owner checked on read) so the next sandbox starts fast too.
// The key covers everything that shapes the memory image: Pyodide's version, the harness and the
// sidecar source. Pyodide itself rejects a snapshot from another build (it checks its build id).

import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ResolvedSeal } from "../../options.ts";
import { sidecarFiles } from "./launch.ts";
import { buildSnapshot } from "./sidecar-client.ts";

const inMemory = new Map<string, Promise<Uint8Array>>();

export function snapshotKey(): string {
  const files = sidecarFiles();
  const hash = createHash("sha256");
  hash.update(readFileSync(join(files.pyodideDir, "package.json")));
  hash.update(readFileSync(files.harness));
  hash.update(readFileSync(files.sidecar));
  return hash.digest("hex").slice(0, 24);
}

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "wasmcell");
}

function readCached(path: string): Uint8Array | undefined {
  try {
    const st = statSync(path);
    // Only a file we own that nobody else can write: a planted snapshot would run as the interpreter.
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return undefined;
    if ((st.mode & 0o022) !== 0 || !st.isFile()) return undefined;
    return new Uint8Array(readFileSync(path));
  } catch {
    return undefined;
  }
}

function writeCached(path: string, bytes: Uint8Array): void {
  try {
    mkdirSync(cacheDir(), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, bytes, { mode: 0o600 });
    renameSync(tmp, path);
    // One snapshot per build is enough: older ones (other Pyodide or wasmcell versions) are 30 MB each.
    for (const name of readdirSync(cacheDir())) {
      if (/^pyodide-[0-9a-f]+\.snapshot$/.test(name) && join(cacheDir(), name) !== path)
        rmSync(join(cacheDir(), name), { force: true });
    }
  } catch {
    // No writable cache directory: the snapshot lives in memory for this process only.
  }
}

/** The snapshot for this build, from memory, the disk cache, or built now. */
export function getSnapshot(options: { seal: ResolvedSeal; processMemoryMb: number }): Promise<Uint8Array> {
  const key = snapshotKey();
  let hit = inMemory.get(key);
  if (!hit) {
    const path = join(cacheDir(), `pyodide-${key}.snapshot`);
    hit = (async () => {
      const cached = readCached(path);
      if (cached) return cached;
      const built = await buildSnapshot(options);
      writeCached(path, built);
      return built;
    })();
    hit.catch(() => inMemory.delete(key));
    inMemory.set(key, hit);
  }
  return hit;
}
