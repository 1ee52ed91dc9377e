// `wasmcell doctor`: the seal layers this machine supports (asked of the jail) and each engine's own
// answer about whether it can run here (asked of the engine). Returns data; the CLI prints it.

import { ENGINE_INFO } from "../core/types.ts";
import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal } from "../options/index.ts";
import {
  sealReport,
  stagingStatus,
  type HostTools,
  type SealReport,
  type StageStore,
  type StagingStatus,
} from "../jail/index.ts";
import { nativeStatus } from "./native/doctor.ts";
import { NATIVE_RUNTIME_FILES } from "./native/index.ts";
import { sidecarFiles } from "./pyodide/launch.ts";
import { packageStatus, type EngineStatus } from "./status.ts";
import { cacheDir } from "../library/cache.ts";
import { installedLibrary } from "../library/library.ts";
import { snapshotCached } from "./pyodide/boot-image.ts";

export type { EngineStatus } from "./status.ts";

export interface DoctorReport extends SealReport {
  engines: EngineStatus[];
  /** The Python package library (`wasmcell setup`). */
  packages: LibraryStatus;
  /** Whether the jail's drop uid reaches the runtime files, and if not, their staged copies. */
  staging: StagingStatus;
}

export interface DoctorOptions {
  seal?: ResolvedSeal;
  /** @internal Host tool paths, for tests that make one missing. */
  tools?: Partial<HostTools>;
  /** @internal The native tier's python3, for tests. */
  python?: string;
  /** @internal Where staged copies go, for tests. */
  stageStore?: StageStore;
}

export async function doctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const seal = options.seal ?? RESOLVED_DEFAULT_SEAL;
  const tools = options.tools ?? {};
  const report = await sealReport({ seal, tools });
  const staging = stagingStatus(runtimeFiles(), seal, options.stageStore);
  const engines: EngineStatus[] = [
    packageStatus("quickjs", "quickjs-emscripten-core"),
    packageStatus("pyodide", "pyodide"),
    await nativeStatus(seal, tools, options.python),
  ].map((e) =>
    // Both Python tiers bind the runtime files into their jails: one that can neither be read nor
    // staged fails every run there.
    ENGINE_INFO[e.engine].runsIn === "process" && e.available && !staging.available
      ? { ...e, available: false, detail: `runtime files unreachable by the jail: ${staging.detail}` }
      : e,
  );
  return { ...report, engines, packages: libraryStatus(), staging };
}

/** The package's own files the Python tiers bind into their jails (the Node binary runs the sidecar). */
function runtimeFiles(): string[] {
  const { zoneinfo: _system, ...sidecar } = sidecarFiles();
  const all = [process.execPath, ...Object.values(sidecar), ...NATIVE_RUNTIME_FILES];
  // A file inside a bound folder (the sidecar's entry point) is bound, and staged, with its folder.
  return all.filter((p) => !all.some((q) => p.startsWith(`${q}/`)));
}

export interface LibraryStatus {
  /** The package library for the shipped lock is installed (the engines mount it). */
  installed: boolean;
  /** The Pyodide snapshot for it is cached: the first run starts warm. */
  snapshot: boolean;
  dir?: string;
  packages?: number;
  detail: string;
}

/** What `wasmcell setup` installed (a quick look; `setup --check` verifies). */
export function libraryStatus(cache = cacheDir()): LibraryStatus {
  const library = installedLibrary({ cache });
  const snapshot = snapshotCached(library, cache);
  if (!library) {
    return {
      installed: false,
      snapshot,
      detail: `not installed in ${cache}: Python runs have the standard library only (run wasmcell setup)`,
    };
  }
  const m = library.manifest;
  return {
    installed: true,
    snapshot,
    dir: library.dir,
    packages: m.packages.length,
    detail:
      `${m.packages.length} packages (${m.packages.map((p) => `${p.name} ${p.version}`).join(", ")}) in ${library.dir}; ` +
      (snapshot ? "engine snapshot built" : "engine snapshot missing: the first run builds it (run wasmcell setup)"),
  };
}
