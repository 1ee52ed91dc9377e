// How a Pyodide sidecar process is started: the one place that knows the sidecar's files, its Node
// flags and the jail spec. Everything the seal asks for is either set up or an error.

import { existsSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { SealUnavailableError } from "../../core/errors.ts";
import { cgroupSupport, spawnJailed, type JailedProcess } from "../../jail/index.ts";
import type { ResolvedSeal } from "../../options/index.ts";

/** Host paths of what the sidecar needs to read: nothing else is bound into its jail. */
export interface SidecarFiles {
  pyodideDir: string;
  /** The sidecar's own folder (its modules and Python files), bound and allowed as a whole. */
  sidecarDir: string;
  /** The sidecar's entry point, inside sidecarDir (same extension as this module). */
  sidecar: string;
  harness: string;
  /** The display module the harness imports (beside the harness, in the jail too: main.ts reads it there). */
  display: string;
  /** The host's tz database (Debian's tzdata), bound read-only for zoneinfo; absent when the host has none. */
  zoneinfo?: string;
}

/** Where the tz database is, on the host and (for Python's zoneinfo, whose default TZPATH has it) in the box. */
const ZONEINFO = "/usr/share/zoneinfo";

export function sidecarFiles(): SidecarFiles {
  // The sidecar sits next to this module with the same extension (.ts from source, .js when built).
  const self = fileURLToPath(import.meta.url);
  const ext = self.slice(self.lastIndexOf("."));
  return {
    pyodideDir: dirname(fileURLToPath(import.meta.resolve("pyodide/pyodide.mjs"))),
    sidecarDir: fileURLToPath(new URL("./sidecar", import.meta.url)),
    sidecar: fileURLToPath(new URL(`./sidecar/main${ext}`, import.meta.url)),
    harness: fileURLToPath(new URL("../lib/python/harness.py", import.meta.url)),
    display: fileURLToPath(new URL("../lib/python/wasmcell_display.py", import.meta.url)),
    ...(existsSync(ZONEINFO) ? { zoneinfo: realpathSync(ZONEINFO) } : {}),
  };
}

/** The permission-model flag this Node understands, or undefined when it has none. */
export function permissionFlag(): "--permission" | "--experimental-permission" | undefined {
  const flags = process.allowedNodeEnvironmentFlags;
  if (flags.has("--permission")) return "--permission";
  if (flags.has("--experimental-permission")) return "--experimental-permission";
  return undefined;
}

export interface LaunchOptions {
  seal: ResolvedSeal;
  /** The process-level memory cap (cgroup, or RLIMIT_AS when there is no cgroup), in MiB. */
  processMemoryMb: number;
  /**
   * @internal Tests only: a host script run in the sidecar's place, with exactly the sidecar's
   * flags, binds and jail, to probe what each seal layer stops once code runs in the JS realm.
   */
  program?: string;
  /** Host directory of the package library (`wasmcell setup`), bound read-only; none: stdlib only. */
  library?: string;
  /** An open read-only descriptor of the verified snapshot file, readable by the sidecar at SNAPSHOT_FD. */
  snapshotFd?: number;
}

/**
 * Where the sidecar finds the snapshot descriptor the host passes in. Passed, not bound: the cache
 * file is 0600 and the jail's dropped uid could not open it, and a read from one descriptor beats a
 * 38 MB copy through the stdin pipe (≈0.2–0.35 s per start on a loaded 2-core machine).
 */
export const SNAPSHOT_FD = 4;

/** How long a sidecar may take to become ready (a cold load on a loaded 2-core machine is ~3–10 s). */
export const START_TIMEOUT_MS = 60_000;
/** How much of a sidecar's stderr is kept for an error message. */
export const STDERR_KEEP = 4096;

// Node + V8 + Pyodide's JS side, on top of the WASM heap the guest may use.
const PROCESS_OVERHEAD_MB = 256;
// Without a cgroup, RLIMIT_AS is the only process cap; V8 reserves ~10 GiB of guard regions per WASM
// memory unless the trap handler is off (then bounds checks are explicit and ~2 GiB suffice).
const ADDRESS_SPACE_OVERHEAD_MB = 2048;

/** The memory cap a sidecar started with `processMemoryMb` runs under (its cgroup's), in bytes. */
export function processCapBytes(processMemoryMb: number): number {
  return (processMemoryMb + PROCESS_OVERHEAD_MB) * 1024 * 1024;
}

export async function launchSidecar(options: LaunchOptions): Promise<JailedProcess> {
  const files = sidecarFiles();
  const { seal } = options;
  const jailed = seal.bubblewrap;
  const ext = files.sidecar.slice(files.sidecar.lastIndexOf("."));
  const inJail = jailed
    ? {
        pyodideDir: "/sandbox/pyodide",
        sidecarDir: "/sandbox/sidecar",
        sidecar: `/sandbox/sidecar/main${ext}`,
        harness: "/sandbox/harness.py",
        display: "/sandbox/wasmcell_display.py",
      }
    : files;
  // A test's probe runs in the entry point's place, bound and allowed beside the sidecar's folder.
  const program = options.program && {
    host: options.program,
    jail: jailed ? `/sandbox/program${options.program.slice(options.program.lastIndexOf("."))}` : options.program,
  };
  const library = options.library && { host: options.library, jail: jailed ? "/sandbox/packages" : options.library };
  // --expose-gc: the sidecar collects once after start-up (then deletes the global) to give back
  // the snapshot and load-time garbage; without it an idle sidecar holds ~100 MB more.
  const nodeArgs: string[] = ["--no-warnings", "--disallow-code-generation-from-strings", "--expose-gc"];
  if (seal.nodePermissions) {
    const flag = permissionFlag();
    if (!flag)
      throw new SealUnavailableError(
        "nodePermissions",
        `Node ${process.version} has no permission model; use Node ≥ 22 or set seal.nodePermissions to false`,
      );
    // Read-only: only the engine's own files. No --allow-child-process, --allow-worker, --allow-addons,
    // --allow-wasi, --allow-inspector, --allow-fs-write; on Node ≥ 25 no --allow-net either, so the
    // network is denied in-process as well.
    nodeArgs.push(
      flag,
      `--allow-fs-read=${inJail.pyodideDir}/`,
      `--allow-fs-read=${inJail.sidecarDir}/`,
      ...(program ? [`--allow-fs-read=${program.jail}`] : []),
      `--allow-fs-read=${inJail.harness}`,
      `--allow-fs-read=${inJail.display}`,
      ...(files.zoneinfo ? [`--allow-fs-read=${jailed ? ZONEINFO : files.zoneinfo}/`] : []),
    );
    if (library) nodeArgs.push(`--allow-fs-read=${library.jail}/`);
  }
  const hasCgroup = cgroupSupport().memoryParent !== undefined;
  if (!hasCgroup) nodeArgs.push("--disable-wasm-trap-handler");
  nodeArgs.push(program ? program.jail : inJail.sidecar, inJail.pyodideDir, inJail.harness);
  // Positional: zoneinfo ("" when absent), then the library.
  if (files.zoneinfo || library) nodeArgs.push(files.zoneinfo ? (jailed ? ZONEINFO : files.zoneinfo) : "");
  if (library) nodeArgs.push(library.jail);
  return spawnJailed({
    executable: process.execPath,
    jailExecutable: jailed ? "/sandbox/bin/node" : process.execPath,
    args: nodeArgs,
    // Unjailed, the same list says "these host paths are themselves", so a checkout under /tmp is not
    // mistaken for a path inside the private scratch that stands in for the jail's /tmp.
    roBinds: [
      { host: files.pyodideDir, jail: inJail.pyodideDir },
      { host: files.sidecarDir, jail: inJail.sidecarDir },
      ...(program ? [program] : []),
      { host: files.harness, jail: inJail.harness },
      { host: files.display, jail: inJail.display },
      ...(files.zoneinfo ? [{ host: files.zoneinfo, jail: jailed ? ZONEINFO : files.zoneinfo }] : []),
      ...(library ? [library] : []),
    ],
    ...(options.snapshotFd !== undefined ? { inheritFiles: [options.snapshotFd] } : {}),
    seccompProfile: "node-pyodide",
    seal,
    // The guest's files live in Pyodide's in-memory file system; the process itself writes nothing.
    scratchMb: 1,
    rlimits: { openFiles: 64, fileSizeBytes: 1 << 20 },
    memoryBytes: processCapBytes(options.processMemoryMb),
    memoryFallbackAddressSpaceBytes: (options.processMemoryMb + ADDRESS_SPACE_OVERHEAD_MB) * 1024 * 1024,
  });
}
