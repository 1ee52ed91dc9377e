// The Pyodide sidecar: a separate Node process that loads Pyodide once and then answers runs over
// stdio (see ../protocol.ts). It is the inside of the seal, not the seal: the host starts it under
// bubblewrap + seccomp + Node's permission model + a dropped uid, and kills it at the deadline.
//
// Self-contained on purpose: under `--permission` it may read only its own folder (this one: the
// modules and the Python files beside them), the harness and the Pyodide directory, so it imports
// nothing but `node:` builtins, its own folder and Pyodide (type imports are erased). One concern per
// file: channel.ts (the protocol on stdio), guards.ts (process.binding stub, guest hardening),
// limits.ts (memory cap, deadline interrupt), timers.ts, library.ts (read-only mounts), bridge.ts (the
// devices guest Python reaches the host's fetch and the idle wait through: net.ts, loop.ts),
// checkpoint.ts (stateless runs), files.ts, output.ts, runtime.ts (loading Pyodide).
//
// Stateless runs: after load we take a checkpoint of every piece of mutable state the guest can
// reach (checkpoint.ts has the inventory), and after every run rebuild all of it from the record and
// prove it with a fingerprint: copying ~30 MB into already-committed memory costs a few ms, a fresh
// interpreter ~0.3–1 s. Pending timers the run left (background asyncio tasks) are cancelled first.
// Anything that cannot be rebuilt (a grown or rewritten function table, a dynamic library, a changed
// JS built-in, a fingerprint that differs, a fatal error) makes the sidecar retire instead: the host
// replaces it.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RunMessage, SidecarFailure } from "../protocol.ts";
import { installBridgeDevices } from "./bridge.ts";
import { claimStdout, die, initMessage, listen, nextMessage, send, takeSnapshot, writeAll } from "./channel.ts";
import { restoreCheckpoint, takeCheckpoint } from "./checkpoint.ts";
import { collectOutputFiles, placeInputFiles } from "./files.ts";
import { dropUnusedWebGlobals, hardenGuest, lockStackTraceHook, refuseSockets, stubProcessBinding } from "./guards.ts";
import { LIBRARY_MOUNT, mountLibrary, mountZoneinfo, type MountFS } from "./library.ts";
import { capMemoryGrowth, deadline, interruptSource, memory } from "./limits.ts";
import { flushOutput, output, startOutput, writer } from "./capture.ts";
import { display, startDisplay } from "./display.ts";
import {
  DISPLAY_MODULE,
  HARNESS_MODULE,
  loadPyodideRuntime,
  pythonSource,
  reserveMemoryFor,
  SITE_PACKAGES,
  WORKDIR,
  type PyodideAPI,
  type PyProxyFn,
} from "./runtime.ts";
import { applyState, captureState, checkpointDigest, recordPristineTree, type LoadProblem } from "./record.ts";
import { headroom, LOAD_MARGIN, SAVE_MARGIN } from "./budget.ts";
import { cancelPendingTimers, trackTimers } from "./timers.ts";

const started = performance.now();
// Optional arguments (an empty string when absent): the tz database's directory and the package
// library's directory, both mounted read-only.
const [pyodideDir, harnessFile, zoneinfoDir, libraryDir] = process.argv.slice(2);
if (!pyodideDir || !harnessFile) {
  process.stderr.write("usage: sidecar <pyodide dir> <harness.py>\n");
  process.exit(64);
}

/** The real setTimeout (trackTimers wraps the global for the guest's event loop). */
const idleTimer = globalThis.setTimeout;
/** How long a new sidecar waits idle before its one collection of the load-time garbage. */
const IDLE_GC_MS = 300;

claimStdout();
stubProcessBinding();
trackTimers();
capMemoryGrowth();
listen();

function makeFailure(kind: SidecarFailure["kind"], name: string, message: string): SidecarFailure {
  return { kind, name, message };
}

/**
 * setup.py, loop.py, then net.py, in __main__'s globals (one interpreter-wide setup, as one script);
 * net.py imports pyfetch.py (the guest's pyodide.http), installed beside the harness.
 */
function runSetup(py: PyodideAPI): void {
  py._module.FS.writeFile(`${SITE_PACKAGES}/wasmcell_pyfetch.py`, pythonSource("pyfetch.py"));
  py.runPython(pythonSource("setup.py"));
  py.runPython(pythonSource("loop.py"));
  py.runPython(pythonSource("net.py"));
}

/** Pyodide, from the snapshot the host sent (if any); nothing keeps the snapshot's bytes afterwards. */
async function load(dir: string, makeSnapshot: boolean): Promise<PyodideAPI> {
  const snapshot = takeSnapshot();
  const restoreInstantiate = snapshot?.length ? reserveMemoryFor(snapshot.length) : () => {};
  const py = await loadPyodideRuntime(dir, snapshot, makeSnapshot);
  restoreInstantiate();
  // Pyodide keeps its load options; drop its reference to the 30 MB snapshot so it can be collected.
  const config = (py as unknown as { _api?: { config?: Record<string, unknown> } })._api?.config;
  if (config) delete config._loadSnapshot;
  return py;
}

async function main(dir: string, harness: string): Promise<void> {
  const first = await nextMessage();
  const init = initMessage();
  if (first !== "init" || !init) die("expected init");
  const receivedAt = performance.now() - started;
  const mode = init.mode;
  const loadStart = performance.now();
  const py = await load(dir, mode === "snapshot");
  const loadMs = performance.now() - loadStart;
  const M = py._module;
  const FS = M.FS;

  if (!init.snapshotBytes) {
    FS.mkdirTree(SITE_PACKAGES);
    FS.writeFile(`${SITE_PACKAGES}/${HARNESS_MODULE}.py`, readFileSync(harness));
    // The display module the harness imports lies beside the harness (launch.ts binds it there).
    FS.writeFile(`${SITE_PACKAGES}/${DISPLAY_MODULE}.py`, readFileSync(join(dirname(harness), `${DISPLAY_MODULE}.py`)));
  }
  if (libraryDir) mountLibrary(FS as unknown as MountFS, libraryDir);
  // The library goes after the standard library on sys.path (it cannot shadow it), and what the init
  // message names is imported before the snapshot is taken: runs that use it find it loaded. Only
  // module names the host validated reach here; importing them runs library code, never guest code.
  if (mode === "snapshot" || !init.snapshotBytes) {
    py.runPython(
      `import sys, importlib\n` +
        (libraryDir ? `sys.path.append(${JSON.stringify(LIBRARY_MOUNT)})\n` : "") +
        (mode === "snapshot" ? `for _m in ${JSON.stringify(init.preload ?? [])}: importlib.import_module(_m)\n` : ""),
    );
  }
  // The cwd is JS-side file-system state (not in a snapshot): set on every start.
  const chdir = `import os\nos.chdir(${JSON.stringify(WORKDIR)})`;
  if (mode === "snapshot") {
    // The setup (imports, hardening, entry point) is pure Python state, so it goes into the snapshot
    // and a sidecar started from it skips that work (~0.1 s). It never ran guest code.
    runSetup(py);
    py.runPython(chdir);
    const bytes = py.makeMemorySnapshot();
    send({ t: "snapshot", bytes: bytes.length });
    writeAll(bytes);
    process.exit(0);
  }
  if (zoneinfoDir) mountZoneinfo(FS as unknown as MountFS, zoneinfoDir);
  const setupStart = performance.now();
  py.setStdout(writer("stdout"));
  py.setStderr(writer("stderr"));
  py.setInterruptBuffer(interruptSource);
  // From a snapshot the setup already ran.
  if (!init.snapshotBytes) runSetup(py);
  py.runPython(chdir);
  refuseSockets(M);
  hardenGuest(py);
  lockStackTraceHook();
  installBridgeDevices(M);
  const start = py.globals.get("_wasmcell_start");
  const reseed = py.globals.get("_wasmcell_reseed");
  if (!start || !reseed) die("setup did not define _wasmcell_start and _wasmcell_reseed");
  const stateful = init.stateful;
  if (!stateful) {
    // Proxies created during a run would be decref'd by the FinalizationRegistry *after* the reset,
    // on memory that no longer holds them. The reset frees everything a run made, so nothing leaks.
    M.finalizationRegistry = { register() {}, unregister() {} };
  }
  const checkpointStart = performance.now();
  dropUnusedWebGlobals();
  const checkpoint = stateful ? undefined : takeCheckpoint(M);
  if (checkpoint) recordPristineTree(M, checkpoint);
  // The snapshot (30 MB) and load-time garbage are unreachable now; an idle process would keep them
  // mapped until some later allocation triggers a collection, so collect once — off the first run's
  // path: when the sidecar has been idle a moment, or after the first run's reset (before it says
  // it is free again), whichever comes first. (The `gc` global cannot be deleted; code that reaches
  // it can only spend its own CPU, which the deadline bounds.)
  const gc = (globalThis as { gc?: () => void }).gc;
  let gcPending = typeof gc === "function";
  let running = false;
  const collectOnce = () => {
    if (!gcPending || running) return;
    gcPending = false;
    gc?.();
  };
  idleTimer(collectOnce, IDLE_GC_MS);
  // The checkpoint's digest (what session records are relative to) is hashed once, when idle, so the
  // first session resumed here does not wait for it.
  if (checkpoint) idleTimer(() => running || checkpointDigest(checkpoint), IDLE_GC_MS * 2);
  send({
    t: "ready",
    startMs: performance.now() - started,
    loadMs,
    phases: {
      received: receivedAt,
      setup: checkpointStart - setupStart,
      checkpoint: performance.now() - checkpointStart,
    },
    fromSnapshot: init.snapshotBytes > 0,
  });

  /** Back to the checkpoint, proven, and said; a sidecar that cannot prove it exits (the host replaces it). */
  const reset = (id: number) => {
    const t0 = performance.now();
    cancelPendingTimers();
    const problem = checkpoint ? restoreCheckpoint(M, checkpoint) : "this sidecar has no checkpoint";
    const ms = performance.now() - t0;
    if (!problem) collectOnce();
    send({ t: "reset", id, ms, ...(problem ? { retire: problem } : {}) });
    if (problem) process.exit(0);
    held = false;
    seeded = false;
  };
  // A session holds this pool sidecar between `load` (or its first kept run) and `end`: its runs keep
  // their state, and it may be saved as a record (session-state.ts).
  let held = false;
  // Whether the interpreter's `random` has drawn its own seed since the checkpoint: a session's first
  // run reseeds, its later runs do not, so a sequence the guest seeded carries on. A loaded record
  // has its own state (reseeded at the load when the host asks: a fork, a copy).
  let seeded = false;
  for (;;) {
    const message = await nextMessage();
    if (message === "init") continue;
    if (message.t === "save") {
      const t0 = performance.now();
      const room = message.capBytes === undefined ? Infinity : headroom(message.capBytes, SAVE_MARGIN, M.HEAPU8.length);
      const record = checkpoint ? captureState(M, checkpoint, room) : "this sidecar has no checkpoint";
      const ms = performance.now() - t0;
      if (typeof record === "string") send({ t: "state", id: message.id, refused: record, ms });
      else if ("size" in record) send({ t: "state", id: message.id, refused: record.size, size: true, ms });
      else {
        send({ t: "state", id: message.id, bytes: record.length, ms });
        writeAll(record);
      }
      continue;
    }
    if (message.t === "load") {
      const t0 = performance.now();
      const bounds = {
        maxBytes: message.maxBytes,
        room: message.capBytes === undefined ? Infinity : headroom(message.capBytes, LOAD_MARGIN, M.HEAPU8.length),
        memoryCap: message.memoryBytes ?? Infinity,
      };
      // Not kept past the load: the inflated copy is what the budget counts.
      const data = message.data;
      delete message.data;
      const reseeded = (): LoadProblem | undefined => {
        const why = message.reseed ? reseedRandom(reseed) : undefined;
        return why === undefined ? undefined : { why, retire: true };
      };
      const problem: LoadProblem | undefined =
        !checkpoint || held || !data
          ? { why: "a record can only be loaded into a pristine pool sidecar", retire: true }
          : (applyState(M, checkpoint, data, bounds) ?? reseeded());
      const ms = performance.now() - t0;
      if (problem && !problem.retire) {
        // Nothing of it reached the interpreter: refused, and this sidecar serves on, pristine.
        send({ t: "loaded", id: message.id, ms, refused: problem.why, ...(problem.size ? { size: true } : {}) });
        continue;
      }
      send({ t: "loaded", id: message.id, ms, ...(problem ? { retire: problem.why } : {}) });
      if (problem) process.exit(0);
      held = true;
      seeded = true;
      continue;
    }
    if (message.t === "end") {
      reset(message.id);
      continue;
    }
    if (message.t !== "run") continue;
    running = true;
    const keep = stateful || message.keep === true;
    runOne(py, start, message, keep, !keep || !seeded);
    if (keep) seeded = true;
    running = false;
    if (message.keep) held = true;
    else if (checkpoint) reset(message.id);
  }
}

/** How long reseeding a loaded session's `random` may take before it is interrupted. */
const RESEED_MS = 1000;

/**
 * Draws a new seed for a loaded session's `random` (a fork, a copy); why it could not, if it could not.
 * It runs the session's Python outside any run, so it gets a deadline of its own (the session's code
 * may have rewritten the generator to spin) and no output: what it prints is dropped, not framed with
 * the last run's id (the host would take that for a protocol violation). The next run's startOutput
 * opens the capture again.
 */
function reseedRandom(reseed: PyProxyFn): string | undefined {
  output.truncated = true;
  deadline.fired = false;
  deadline.lastSent = Number.NEGATIVE_INFINITY;
  deadline.at = performance.now() + RESEED_MS;
  try {
    reseed();
    return undefined;
  } catch (error) {
    const why = deadline.fired ? `it did not return within ${RESEED_MS} ms` : String(error).slice(0, 200);
    return `the loaded session's random generator could not be reseeded: ${why}`;
  } finally {
    deadline.at = Number.POSITIVE_INFINITY;
  }
}

function runOne(py: PyodideAPI, start: PyProxyFn, message: RunMessage, stateful: boolean, reseed: boolean): void {
  const { limits } = message;
  const M = py._module;
  startOutput(message);
  startDisplay(message);
  memory.hit = false;
  memory.peakBytes = M.HEAPU8.length;
  // The cap, and how this process sees it fire. Normally the grow hook: every allocation past the
  // memory already there asks to grow it, and the hook refuses past the cap (and records it).
  // malloc's own footprint limit would refuse first and silently, so it is off then (MAX_SIZE_T).
  // When an earlier run grew the memory past this run's cap (WASM memory cannot shrink), the grow
  // hook cannot hold it and the footprint limit does (dlmalloc state, in linear memory: the reset
  // restores it). Its only trace is malloc's peak footprint: a run that grew to within a MiB of the
  // limit hit it. One request larger than what is left is refused without that trace and is then a
  // runtime MemoryError: the guest's word alone never makes a `memory` kind.
  const capBytes = limits.memoryMb * 1024 * 1024;
  const footprintBinding = capBytes < M.HEAPU8.length;
  const footprintLimit = Math.min(capBytes, 0xffff0000);
  M._malloc_set_footprint_limit(footprintBinding ? footprintLimit : 0xffffffff);
  memory.capBytes = Math.max(capBytes, M.HEAPU8.length);
  let envelope: string | undefined;
  let failure: SidecarFailure | undefined;
  let fatal: string | undefined;
  try {
    placeInputFiles(M.FS, message.files);
    deadline.fired = false;
    deadline.lastSent = Number.NEGATIVE_INFINITY;
    deadline.at = performance.now() + limits.timeoutMs;
    // Synchronous for async code too (loop.py runs it to completion): nothing is awaited here.
    const value = start(message.code, JSON.stringify({ limits, fresh: !stateful, reseed }));
    if (typeof value === "string") envelope = value;
    else failure = makeFailure("crashed", "InternalError", "the harness returned no envelope");
  } catch (error) {
    // A PythonError escaping the harness (KeyboardInterrupt while building the envelope, a guest that
    // replaced the harness's encoder), or a JavaScript error from inside WASM (a trap, a stack
    // overflow): the interpreter may be broken. A PythonError's message and type are the guest's
    // words, so they decide nothing alone: the kind comes from what this process saw (its interrupt
    // fired, its memory cap refused a growth) or from the class of a JavaScript error.
    const text = String((error as Error)?.message ?? error);
    const pythonType =
      (error as Error)?.name === "PythonError" ? String((error as { type?: unknown }).type) : undefined;
    const code = (error as NodeJS.ErrnoException)?.code ?? ((error as Error)?.cause as NodeJS.ErrnoException)?.code;
    if (deadline.fired && (pythonType === undefined || pythonType === "KeyboardInterrupt"))
      failure = makeFailure("timeout", "KeyboardInterrupt", "the run was stopped at its deadline (limits.timeoutMs)");
    else if (memory.hit && (pythonType === undefined || pythonType === "MemoryError"))
      failure = makeFailure("memory", "MemoryError", "out of memory (limits.memoryMb)");
    else if (pythonType !== undefined)
      failure = makeFailure("crashed", "InternalError", `the harness failed: ${pythonType.slice(0, 200)}`);
    else if (error instanceof RangeError && /Maximum call stack/.test(text))
      failure = makeFailure("stack", "RangeError", "the call stack overflowed");
    else if (code === "ERR_ACCESS_DENIED" || /ERR_ACCESS_DENIED|Access to this API has been restricted/.test(text)) {
      failure = makeFailure("denied", "PermissionError", `the sandbox denied an operation: ${text.slice(0, 300)}`);
    } else failure = makeFailure("crashed", "InternalError", `the interpreter failed: ${text.slice(0, 500)}`);
    fatal = text;
  } finally {
    deadline.at = Number.POSITIVE_INFINITY;
    if (footprintBinding && M._malloc_max_footprint() >= footprintLimit - (1 << 20)) memory.hit = true;
  }
  flushOutput();
  let collected: ReturnType<typeof collectOutputFiles> = { files: [] };
  let unreadable: string | undefined;
  try {
    collected = collectOutputFiles(M.FS, message.files, limits);
  } catch (error) {
    unreadable = String(error).slice(0, 500);
  }
  send({
    t: "result",
    id: message.id,
    ...(failure ? { failure } : { envelope: envelope ?? "" }),
    files: collected.files,
    ...(collected.over ? { filesOverLimit: collected.over } : {}),
    ...(unreadable !== undefined ? { filesUnreadable: unreadable } : {}),
    ...(display.over ? { displayOverLimit: true } : {}),
    outputBytes: output.attempted,
    outputTruncated: output.truncated,
    peakMemoryBytes: memory.peakBytes,
    interrupted: deadline.fired,
    memoryCapHit: memory.hit,
  });
  if (fatal !== undefined) {
    // Never reuse an interpreter that threw through WASM: exit, the host starts a fresh one.
    send({ t: "reset", id: message.id, ms: 0, retire: `interpreter error: ${fatal.slice(0, 300)}` });
    process.exit(0);
  }
}

main(pyodideDir, harnessFile).catch((error: unknown) =>
  die(`sidecar failed: ${String((error as Error)?.stack ?? error)}`),
);
