// `python`: the Python pool and engine. The option, its defaults and its schema side by side.

import { z } from "zod";
import { PYTHON_ENGINES, type PythonEngine } from "../core/types.ts";
import type { AsParsed, Same } from "./zod.ts";

export interface PythonOptions {
  /**
   * The engine for Python runs that name none.
   * @defaultValue "pyodide"
   */
  engine?: PythonEngine;
  /**
   * Warm Pyodide sidecars kept ready; also the most native-tier runs (one jail each) at once.
   * @defaultValue 2
   */
  pool?: number;
  /**
   * Pyodide sidecars started beside the pool that take no runs: when a sidecar is lost (a run killed at
   * its deadline, a crash, a retired sidecar), one steps in at once instead of the pool waiting most of
   * a second for a new start, and another standby starts in the background. Each costs a sidecar's
   * memory while it waits. No effect on the native tier (it has no sidecars).
   * @defaultValue 0
   */
  standby?: number;
  /**
   * Pyodide sidecars beyond `pool` that sessions whose state cannot leave their interpreter may keep
   * (an open file, a state over `sessions.maxSnapshotBytes`, a sidecar started without the engine
   * snapshot). When another run needs the sidecar such a session holds between runs, the session
   * keeps it and it leaves the pool, which starts another; past this bound, the least recently used
   * such idle session is ended to make room (its next run says so: a `SessionLostError`, kind
   * `crashed`). So a guest never makes another tenant's run wait on it or fail, and
   * Pyodide runs at most `pool + standby + maxPinned` sidecars (~250 MB each). 0: such a session is
   * ended as soon as its sidecar is needed.
   * @defaultValue 2
   */
  maxPinned?: number;
  /**
   * Runs that may wait for a sidecar (or, native tier, for a free run slot) before `run()` throws `QUEUE_FULL`.
   * @defaultValue 64
   */
  maxQueue?: number;
  /**
   * Start the pool when the sandbox is created rather than on the first Python run.
   * @defaultValue `true` when a `python` object is given, `false` when `python` is left out
   */
  prewarm?: boolean;
  /**
   * Start sidecars from a Pyodide memory snapshot (built once per machine, cached) rather than a cold load.
   * @defaultValue true
   */
  snapshot?: boolean;
  /**
   * Mount the package library `wasmcell setup` installed (read-only, on `sys.path` after the standard
   * library; the native tier gets the same files). Without setup, or with `false`: standard library only.
   * @defaultValue true
   */
  packages?: boolean;
  /**
   * Modules the native tier's warm parent imports once, before any run (each run is a copy-on-write
   * child of it, so these cost a run nothing). With `matplotlib` the parent also makes wasmcell's
   * display module its backend (it draws with Agg) and draws one figure, so a run's first plot pays
   * no first-use cost. Names only (dotted allowed); a module that cannot be imported fails the
   * engine's start, naming it. No effect on Pyodide.
   * @defaultValue ["numpy", "pandas", "matplotlib"]
   */
  preload?: readonly string[];
  /**
   * Native tier: also keep, per slot, a light warm parent that imported nothing of `preload`, only the
   * standard library's everyday modules (~20 MB instead of ~97). A stateless run whose code imports
   * only the standard library (no `preload` module, no module from its input files, no
   * `exec`/`eval`/`__import__`, no module only the stack's parent holds) is a child of it: its fork
   * and teardown cost a fraction of the stack parent's (`print(1)` back to back: ~3 ms instead of ~6).
   * Any other run, and every session, is a child of the stack's parent. `false`: every run is.
   * @defaultValue true
   */
  lightParent?: boolean;
  /**
   * Native-tier sessions live at once (`sandbox.session({ language: "python", engine: "native" })`):
   * each is a warm parent of its own with one live child (~100 MB resident beyond what the system
   * shares). Past it, opening one throws EngineStartError; an idle one ends after `sessions.idleMs`.
   * @defaultValue 4
   */
  maxSessions?: number;
}

/**
 * The Python defaults a caller gets. `prewarm` is not a constant: it is true exactly when the caller
 * gives a `python` object (asking for Python settings means asking for Python), so it is not listed here.
 */
export const DEFAULT_PYTHON: Readonly<Required<Omit<PythonOptions, "prewarm">>> = Object.freeze({
  engine: "pyodide",
  pool: 2,
  standby: 0,
  maxPinned: 2,
  maxQueue: 64,
  snapshot: true,
  packages: true,
  preload: Object.freeze(["numpy", "pandas", "matplotlib"]),
  lightParent: true,
  maxSessions: 4,
});

export const pythonSchema = z
  .object({
    engine: z.enum(PYTHON_ENGINES),
    pool: z.number().int().min(1).max(64),
    standby: z.number().int().min(0).max(8),
    maxPinned: z.number().int().min(0).max(64),
    maxQueue: z.number().int().nonnegative().max(1_000_000),
    prewarm: z.boolean(),
    snapshot: z.boolean(),
    packages: z.boolean(),
    preload: z
      .array(
        z
          .string()
          .max(100)
          .regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/, "a module name (letters, digits, _ and dots)"),
      )
      .max(64)
      .readonly(),
    lightParent: z.boolean(),
    maxSessions: z.number().int().min(0).max(256),
  })
  .partial()
  .strict();

/** The schema and `PythonOptions` name the same fields with the same types (checked when compiling). */
export const pythonTied: Same<z.infer<typeof pythonSchema>, AsParsed<PythonOptions>> = true;
