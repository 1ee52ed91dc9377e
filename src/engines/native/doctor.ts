// What the native tier needs on this machine, checked for real: Debian's python3 that imports numpy,
// pandas and matplotlib, and the seal the caller asks for. Used by `wasmcell doctor` and by the engine
// itself before it starts (so both say the same thing about a missing piece).

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WasmcellError } from "../../core/errors.ts";
import { resolveOptions, type ResolvedSeal } from "../../options/index.ts";
import { checkSeal, isExecutable, type HostTools } from "../../jail/index.ts";
import type { EngineStatus } from "../status.ts";

/** The Python the native tier runs (Debian's, not a pyenv or venv one on PATH). */
export const NATIVE_PYTHON = "/usr/bin/python3";

/** The Debian packages the native tier needs, as one install command for error messages. */
export const NATIVE_APT_HINT = "apt-get install python3 python3-numpy python3-pandas python3-matplotlib";

export async function nativeStatus(
  seal: ResolvedSeal,
  tools: Partial<HostTools> = {},
  python: string = NATIVE_PYTHON,
): Promise<EngineStatus> {
  if (process.platform !== "linux")
    return { engine: "native", available: false, detail: `Linux only; this is ${process.platform}` };
  if (!isExecutable(python))
    return { engine: "native", available: false, detail: `${python} is not installed (${NATIVE_APT_HINT})` };
  // A home of its own: with no HOME, Python asks the passwd database, and for a uid with no entry
  // there (a container run with `--user 12345`) matplotlib's import fails, which says nothing about
  // the tier (the engine gives every run a HOME in its jail).
  const home = mkdtempSync(join(tmpdir(), "wasmcell-doctor-"));
  const versions = await new Promise<string | Error>((resolve) => {
    execFile(
      python,
      [
        "-I",
        "-c",
        "import numpy, pandas, matplotlib, sys; print(sys.version.split()[0], numpy.__version__, pandas.__version__, matplotlib.__version__)",
      ],
      { env: { HOME: home, MPLCONFIGDIR: home }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve(error ? new Error(String(stderr).trim().split("\n").pop() ?? error.message) : String(stdout).trim()),
    );
  }).finally(() => rmSync(home, { recursive: true, force: true }));
  if (versions instanceof Error)
    return {
      engine: "native",
      available: false,
      detail: `${python} cannot import numpy/pandas/matplotlib: ${versions.message}`,
    };
  try {
    await checkSeal(seal, tools);
  } catch (error) {
    return {
      engine: "native",
      available: false,
      detail: error instanceof WasmcellError ? error.message : String(error),
    };
  }
  const [py, np, pd, mpl] = versions.split(" ");
  const found = `${python} ${py} with numpy ${np}, pandas ${pd}, matplotlib ${mpl}`;
  if (!seal.bubblewrap || python !== NATIVE_PYTHON) return { engine: "native", available: true, detail: found };
  // The warm parent each slot keeps, started for real in its jail and stopped again.
  const warm = await warmParentStatus(seal);
  return warm instanceof Error
    ? { engine: "native", available: false, detail: `${found}; ${warm.message}` }
    : { engine: "native", available: true, detail: `${found}; ${warm}` };
}

/** Starts a warm parent as a slot would (default limits and preload) and says what it took. */
async function warmParentStatus(seal: ResolvedSeal): Promise<string | Error> {
  const { WarmParent } = await import("./warm.ts");
  const { pythonLayout } = await import("./binds.ts");
  const options = resolveOptions({ seal: { bubblewrap: true } });
  try {
    const parent = await WarmParent.start({
      layout: pythonLayout(NATIVE_PYTHON),
      seal,
      limits: options.limits,
      library: undefined,
      preload: options.python.preload,
      network: false,
    });
    const rss = parent.rssBytes();
    await parent.close();
    return `warm parent (python.preload ${options.python.preload.join(", ")}) up in ${Math.round(parent.startedMs)} ms holding ${parent.modules} modules${rss ? `, ${Math.round(rss / (1024 * 1024))} MB resident` : ""}; each run is a copy-on-write child in its own mount, IPC and PID namespaces and cgroup pair`;
  } catch (error) {
    return new Error(error instanceof WasmcellError ? error.message : String(error));
  }
}
