// Precompiling the library, once at setup, for both interpreters that import it: Pyodide's CPython
// 3.14 (run in this process, plain Pyodide with no guest code: it compiles the library's sources, it
// does not execute them) and the native tier's python3. Both write into the same `__pycache__`
// directories under their own tags (cpython-314, cpython-311), so one read-only directory serves both.
// `unchecked-hash` .pyc files are used without a look at the source's mtime: the library never
// changes after setup, and `wasmcell setup --check` is what detects a changed file.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { SetupError } from "../core/errors.ts";
import { isExecutable } from "../jail/index.ts";
import { NATIVE_PYTHON } from "../engines/native/doctor.ts";

const run = promisify(execFile);

const COMPILE_MOUNT = "/lib/wasmcell-compile";

interface MiniPyodide {
  FS: { mkdirTree(path: string): void };
  mountNodeFS(emscriptenPath: string, hostPath: string): void;
  runPython(code: string): unknown;
  setStdout(options: { batched(line: string): void }): void;
  setStderr(options: { batched(line: string): void }): void;
}

/** Compiles every .py under `site` with Pyodide's interpreter; returns how many .pyc it wrote. */
export async function compileForPyodide(site: string): Promise<number> {
  const pyodide = (await import("pyodide")) as unknown as { loadPyodide(options: object): Promise<MiniPyodide> };
  const py = await pyodide.loadPyodide({ fullStdLib: false, jsglobals: Object.create(null) as object });
  // Sources written for Python 3.11 draw SyntaxWarnings from 3.14's compiler: not errors, not shown.
  const quiet = { batched: () => {} };
  py.setStdout(quiet);
  py.setStderr(quiet);
  py.FS.mkdirTree(COMPILE_MOUNT);
  py.mountNodeFS(COMPILE_MOUNT, site);
  const result = py.runPython(`
import compileall, py_compile, re, warnings, pathlib
warnings.simplefilter("ignore")
ok = compileall.compile_dir(${JSON.stringify(COMPILE_MOUNT)}, quiet=2, workers=1,
    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
n = sum(1 for _ in pathlib.Path(${JSON.stringify(COMPILE_MOUNT)}).rglob("*.cpython-314.pyc"))
(bool(ok), n)
`) as { toJs(): [boolean, number]; destroy(): void };
  const [ok, count] = result.toJs();
  result.destroy();
  if (!ok) throw new SetupError("compiling the library with Pyodide's interpreter failed (a source did not compile)");
  return count;
}

/** Compiles the library for the native tier's python3; 0 when there is no native python3 here. */
export async function compileForNative(site: string): Promise<number> {
  if (!isExecutable(NATIVE_PYTHON)) return 0;
  try {
    // -I: isolated (no user site, no PYTHON* variables); -q: errors only.
    await run(
      NATIVE_PYTHON,
      ["-I", "-W", "ignore", "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", site],
      { maxBuffer: 16 << 20 },
    );
    const { stdout } = await run(
      NATIVE_PYTHON,
      [
        "-I",
        "-c",
        "import pathlib, sys; print(sum(1 for _ in pathlib.Path(sys.argv[1]).rglob('*.cpython-%d%d.pyc' % sys.version_info[:2])))",
        site,
      ],
      {},
    );
    return Number(stdout.trim());
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    const why = e.stdout || e.stderr || e.message;
    throw new SetupError(`compiling the library with ${NATIVE_PYTHON} failed: ${why.trim().slice(0, 1000)}`);
  }
}
