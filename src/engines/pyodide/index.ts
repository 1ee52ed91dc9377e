// `language: "python"` on Pyodide: CPython compiled to WebAssembly, run in a pool of sealed sidecar
// processes (see sidecar/main.ts for what happens inside one, launch.ts for the seal around it).
//
// - Pool: `python.pool` sidecars, started from a memory snapshot (`python.snapshot`), prewarmed at
//   createSandbox when `python.prewarm`; a run takes an idle sidecar or queues (bounded by
//   `python.maxQueue`, then QueueFullError). A sidecar resets itself after handing back its result, so
//   the reset is off the caller's path; one that timed out, crashed, or could not prove its state clean
//   is killed and replaced in the background.
// - Sessions (session.ts): state that lives in a pool sidecar while in use and in the session store
//   as an authenticated snapshot while not; opening one starts nothing (it is the checkpoint every
//   pool sidecar holds). A run that finds every pool sidecar taken gets one from the least recently
//   used idle session (holders.ts: evicted; or, if its state cannot move, its sidecar leaves the pool
//   for it, up to `python.maxPinned`, past which such a session is ended): a run never fails or waits
//   on what a session's guest did.

import { aborted, failedRun } from "../../kit/failures.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EngineLifecycle } from "../../kit/lifecycle.ts";
import { SealUnavailableError, SnapshotRejectedError } from "../../core/errors.ts";
import type { SnapshotHeader } from "../sessions/snapshot.ts";
import { checkSeal } from "../../jail/index.ts";
import type { ResolvedOptions, ResolvedRequest } from "../../options/index.ts";
import { WarmPool } from "../../pool/pool.ts";
import type { ResumeOptions, RunResult } from "../../core/types.ts";
import type { Engine, EngineFactory } from "../engine.ts";
import { SessionHolders } from "./holders.ts";
import { permissionFlag, processCapBytes, sidecarFiles } from "./launch.ts";
import type { DataSession } from "../sessions/data-session.ts";
import { SessionKeeper } from "../sessions/keeper.ts";
import { PyodideBackend, type SidecarHost, type SidecarState } from "./state-backend.ts";
import { SidecarProcess, type SidecarStartOptions } from "./sidecar-client.ts";
import { evictedEvent, type Eviction } from "../../library/cache.ts";
import { leasedLibrary, type InstalledLibrary } from "../../library/library.ts";
import { checkLibrary } from "../../library/verify.ts";
import {
  checkedSnapshot,
  getSnapshot,
  loadSnapshot,
  snapshotBuildEstimateMs,
  snapshotKey,
  type Snapshot,
  type SnapshotRejection,
} from "./boot-image.ts";

// The process cap is fixed when a sidecar starts; a run's own `memoryMb` caps the WASM heap inside.
const MIN_PROCESS_MEMORY_MB = 512;

export class PyodideEngine implements Engine {
  readonly name = "pyodide" as const;
  readonly pool: WarmPool<SidecarProcess>;
  readonly #options: ResolvedOptions;
  readonly #life = new EngineLifecycle("python engine");
  /** The engine's sessions (their life is engines/sessions/; where their state lives, state-backend.ts). */
  readonly sessions: SessionKeeper<SidecarState>;
  /** Sessions holding a sidecar between runs, and who gives one back when a run waits. */
  readonly holders: SessionHolders;
  #header: Omit<SnapshotHeader, "createdAt"> | undefined;
  /** Sidecars started so far (pool members and sessions): a reset reuses one, a recycle starts one. */
  sidecarsStarted = 0;
  /** Stateless runs' resets: how many proved the sidecar pristine, how many retired it, and their cost. */
  readonly resets = { proven: 0, retired: 0, totalMs: 0, maxMs: 0 };

  #countReset(sidecar: SidecarProcess, reusable: boolean): void {
    if (!reusable) {
      this.resets.retired++;
      return;
    }
    const ms = sidecar.lastResetMs ?? 0;
    this.resets.proven++;
    this.resets.totalMs += ms;
    this.resets.maxMs = Math.max(this.resets.maxMs, ms);
  }
  /** The package library mounted into every sidecar (undefined: not installed, or `python.packages` off). */
  readonly library: InstalledLibrary | undefined;
  /** Resolves once the library matched setup's record (rejects with IntegrityError otherwise). */
  readonly libraryChecked: Promise<void>;
  #snapshot: Snapshot | undefined;
  #snapshotBuild: Promise<unknown> | undefined;
  /** No snapshot cached: what to build it with, once the first (cold) sidecar is up. */
  #pendingBuild: Parameters<typeof getSnapshot>[0] | undefined;
  readonly #stopBuild = new AbortController();
  /** Settles when a snapshot build this engine asked for has ended (built, failed or stopped). */
  #buildEnded: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Closed sessions' sidecar resets still running (close waits for them; destroy's kill ends them). */
  readonly #resets = new Set<Promise<void>>();

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.library = options.python.packages ? leasedLibrary() : undefined;
    // Checked against setup's record while the first sidecar starts; no run is served before it
    // passed (IntegrityError naming the file otherwise): never a silent use.
    this.libraryChecked = this.library ? checkLibrary(this.library, "pyodide", options.emit) : Promise.resolve();
    this.libraryChecked.catch(() => undefined);
    if (options.python.packages && !this.library) {
      options.emit?.({
        type: "packages.missing",
        engine: "pyodide",
        message: "the Python package library is not installed (run `wasmcell setup`): the standard library only",
      });
    }
    this.pool = new WarmPool<SidecarProcess>({
      name: "python pool",
      size: options.python.pool,
      standby: options.python.standby,
      maxQueue: options.python.maxQueue,
      create: () => this.startSidecar(false),
      destroy: async (s) => {
        s.kill();
        await s.jail.exited;
      },
      isAlive: (s) => s.alive,
    });
    this.holders = new SessionHolders(this.pool, options.python.pool, options.python.maxPinned);
    this.sessions = new SessionKeeper(new PyodideBackend(this.#sidecarHost()), options, {
      idle: (session, idle) => this.holders.idle(session, idle),
      closed: (session) => this.holders.closed(session),
    });
  }

  /**
   * Options every sidecar of this engine starts with. With the snapshot cached (after `wasmcell setup`,
   * or an earlier build) every sidecar starts from it. Without, the snapshot is built in the background
   * (said once through `onEvent`) and sidecars cold-load meanwhile: the first run is served in seconds,
   * not after the build and a second start.
   */
  async sidecarOptions(stateful: boolean): Promise<SidecarStartOptions> {
    const processMemoryMb = Math.max(MIN_PROCESS_MEMORY_MB, this.#options.limits.memoryMb);
    const base: SidecarStartOptions = {
      seal: this.#options.seal,
      processMemoryMb,
      stateful,
      library: this.library?.site,
    };
    if (!this.#options.python.snapshot) return base;
    if (this.#snapshot) {
      try {
        return { ...base, snapshot: checkedSnapshot(this.#snapshot) };
      } catch (error) {
        // Changed on disk since it was verified: said, dropped, and read (then rebuilt) below.
        this.#snapshot = undefined;
        this.#rejected({ file: "", message: (error as Error).message });
      }
    }
    const request = {
      seal: this.#options.seal,
      processMemoryMb,
      library: this.library,
      onRejected: (r: SnapshotRejection) => this.#rejected(r),
      onEvicted: (e: Eviction) => this.#options.emit?.(evictedEvent(e)),
    };
    // A file that does not match its recorded sha256 is removed (and said): then it is built below.
    this.#snapshot = await loadSnapshot(request);
    if (this.#snapshot) return { ...base, snapshot: this.#snapshot };
    if (!this.#pendingBuild) {
      this.#pendingBuild = request;
      let resolve = () => undefined as void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#buildEnded = { promise, resolve };
      this.#stopBuild.signal.addEventListener("abort", resolve, { once: true });
      // Said now, before the cold start, not when the build begins.
      const estimateMs = snapshotBuildEstimateMs(this.library);
      this.#options.emit?.({
        type: "engine.building",
        engine: "pyodide",
        estimateMs,
        message: `the Python engine snapshot is not cached: runs start from a cold interpreter (seconds each) while it is built in the background (about ${Math.round(estimateMs / 1000)} s, once per machine; \`wasmcell setup\` does it ahead of time)`,
      });
    }
    return base;
  }

  #rejected(r: SnapshotRejection): void {
    this.#options.emit?.({
      type: "integrity",
      engine: "pyodide",
      ...(r.file ? { file: r.file } : {}),
      action: "rebuilt",
      message: `${r.message.slice(0, 500)}: the engine snapshot is not used and is built again`,
    });
  }

  #buildSnapshotInBackground(request: Parameters<typeof getSnapshot>[0]): Promise<unknown> {
    const started = performance.now();
    return getSnapshot({ ...request, signal: this.#stopBuild.signal })
      .then(
        (snapshot) => {
          this.#snapshot = snapshot;
          this.#options.emit?.({ type: "engine.built", engine: "pyodide", ms: performance.now() - started });
        },
        (error: unknown) => {
          // Sidecars keep cold-loading; the next engine tries again.
          if (this.#stopBuild.signal.aborted) return;
          this.#options.emit?.({
            type: "engine.built",
            engine: "pyodide",
            ms: performance.now() - started,
            error: String((error as Error)?.message ?? error).slice(0, 500),
          });
        },
      )
      .finally(() => this.#buildEnded?.resolve());
  }

  /**
   * Waits (until `signal` aborts) for a snapshot build this engine has asked for: a session whose first
   * sidecar started cold could never be snapshotted, evicted or moved, so a session opened while the
   * build runs starts once it is done, from the built file (a failed build leaves it cold, as before).
   */
  async #untilBuilt(signal: AbortSignal | undefined): Promise<void> {
    if (!this.#options.python.snapshot || this.#snapshot) return;
    // Nothing started yet (a pool that is not prewarmed): find out whether there is a file to build.
    if (!this.#buildEnded) await this.sidecarOptions(false);
    if (this.#snapshot || !this.#buildEnded) return;
    // The build begins once a cold sidecar is up: make sure one is starting. If none can start, the
    // build never will: stop waiting, and the acquire after this says why the sidecar did not start.
    signal?.throwIfAborted();
    const warming = this.pool.prewarm();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#buildEnded!.promise.then(done, done);
      warming.then(undefined, done);
    });
  }

  async startSidecar(stateful: boolean): Promise<SidecarProcess> {
    const options = await this.sidecarOptions(stateful);
    this.sidecarsStarted++;
    const sidecar = await SidecarProcess.start(options);
    // The build starts once the cold sidecar is up, so the two do not compete for the CPU while the
    // first run waits.
    if (this.#pendingBuild && !this.#snapshotBuild && this.#life.open)
      this.#snapshotBuild = this.#buildSnapshotInBackground(this.#pendingBuild);
    return sidecar;
  }

  run(request: ResolvedRequest): Promise<RunResult> {
    const started = performance.now();
    return this.#life.run(async () => {
      await this.libraryChecked;
      let sidecar: SidecarProcess;
      try {
        sidecar = await this.acquire(request.signal);
      } catch (error) {
        // Aborted while waiting for a sidecar: a result like any other abort, not a throw.
        if (request.signal?.aborted) return abortedWhileQueued(started);
        throw error;
      }
      let run: ReturnType<SidecarProcess["run"]>;
      try {
        run = sidecar.run(request);
      } catch (error) {
        this.pool.release(sidecar, false);
        throw error;
      }
      // The sidecar resets after the result is out: it goes back to the pool when that is done.
      // A reset that fails to report is a sidecar that cannot prove its state: it retires.
      run.settled.then(
        (reusable) => {
          this.#countReset(sidecar, reusable);
          this.pool.release(sidecar, reusable);
        },
        () => this.pool.release(sidecar, false),
      );
      const result = await run.result;
      // Queueing counts: wallMs is from the engine taking the run.
      result.stats.wallMs = performance.now() - started;
      return result;
    });
  }

  /**
   * A pool sidecar. A run that has to wait makes idle sessions give one back (holders.ts), so it never
   * waits on a session between its runs. With `base`, a sidecar started from that engine snapshot
   * (what a record resumes on).
   */
  async acquire(signal?: AbortSignal, base?: string): Promise<SidecarProcess> {
    if (base === undefined) return this.#take(signal);
    // A pool started cold while the snapshot was built holds sidecars of no base: each one met is
    // replaced (its replacement starts from the snapshot). Bounded: every replacement has the base.
    for (let tries = this.#options.python.pool + 1; ; tries--) {
      const sidecar = await this.#take(signal);
      if (sidecar.base === base) return sidecar;
      const here = this.#snapshot?.sha256;
      const replace = here === base && tries > 0;
      this.pool.release(sidecar, !replace);
      if (!replace) throw otherCheckpoint(base, here);
    }
  }

  #take(signal: AbortSignal | undefined): Promise<SidecarProcess> {
    const taken = this.pool.acquire(signal);
    // Queued behind every pool sidecar: sessions idle between runs give theirs back.
    this.holders.reclaim();
    return taken;
  }

  /** What a snapshot of this engine says it is, and what one must say to resume here. */
  async snapshotHeader(): Promise<Omit<SnapshotHeader, "createdAt">> {
    if (this.#header) return this.#header;
    await this.libraryChecked;
    const files = sidecarFiles();
    const version = (JSON.parse(readFileSync(join(files.pyodideDir, "package.json"), "utf8")) as { version: string })
      .version;
    const { limits } = this.#options;
    this.#header = {
      engine: "pyodide",
      language: "python",
      engineVersion: String(version),
      // The snapshot key: Pyodide, the sidecar's files and the package library. A sidecar also checks
      // the record's checkpoint digest, so a cold-started engine refuses a snapshot-started one's.
      lock: snapshotKey(this.library, files),
      limits: { ...limits },
    };
    return this.#header;
  }

  /** What a session's state needs of this engine: its pool (through the holders) and its resets. */
  #sidecarHost(): SidecarHost {
    const o = this.#options;
    const processMemoryMb = Math.max(MIN_PROCESS_MEMORY_MB, o.limits.memoryMb);
    return {
      // A new session takes a sidecar started from the engine snapshot (waiting for a build that is
      // under way; a cold one left from before it is replaced), so its records can resume elsewhere.
      acquire: async (signal, base) => {
        if (base === undefined) await this.#untilBuilt(signal);
        return this.acquire(signal, base ?? this.#snapshot?.sha256);
      },
      release: (sidecar, reusable) => {
        // The same accounting as a stateless run's reset.
        if (reusable) this.#countReset(sidecar, true);
        this.holders.release(sidecar, reusable);
      },
      settling: (reset) => {
        this.#resets.add(reset);
        const done = () => void this.#resets.delete(reset);
        reset.then(done, done);
      },
      header: () => this.snapshotHeader(),
      maxStateBytes: (processMemoryMb + 64) * 1024 * 1024,
      capBytes: processCapBytes(processMemoryMb),
      memoryBytes: o.limits.memoryMb * 1024 * 1024,
    };
  }

  async openSession(): Promise<DataSession<SidecarState>> {
    this.#life.admit();
    await this.libraryChecked;
    return this.sessions.open("python");
  }

  /**
   * A live session from an authenticated snapshot's state (loaded into a pool sidecar and proven);
   * `reseed` (default true) gives it a new seed for Python's `random` (false: the same session carrying on).
   */
  resumeSession(
    state: Uint8Array,
    bytes: number,
    header: SnapshotHeader,
    options: ResumeOptions = {},
  ): Promise<DataSession<SidecarState>> {
    this.#life.admit();
    return this.sessions.resume(state, bytes, header, options);
  }

  /**
   * Runs drain, sessions close (each gives its sidecar back or its record up; a pinned one's is
   * killed), then the pool goes.
   */
  close(): Promise<void> {
    // A background snapshot build is not finished work the caller waits for: stop it.
    this.#stopBuild.abort();
    return this.#life.close(async () => {
      // A store the caller gave is the caller's to close (it may outlive this sandbox): the keeper's call.
      await this.sessions.close();
      await this.#snapshotBuild;
      await Promise.allSettled(this.#resets);
      await this.holders.exited();
      await this.pool.close();
    });
  }

  /**
   * Every sidecar is killed first, those sessions hold included, so no session's run is waited for;
   * then the sessions close (a dead sidecar goes back to the destroyed pool, which lets it go).
   */
  destroy(): Promise<void> {
    this.#stopBuild.abort();
    return this.#life.destroy(async () => {
      await this.#snapshotBuild;
      await Promise.all([this.pool.destroy(), this.holders.destroy()]);
      await this.sessions.close();
    });
  }
}

function otherCheckpoint(base: string, here: string | undefined): SnapshotRejectedError {
  return new SnapshotRejectedError(
    "checkpoint",
    `it was taken on sidecars started from the engine snapshot ${base.slice(0, 16)}, and this sandbox's start ${here ? `from ${here.slice(0, 16)}` : "without one (python.snapshot is false, or it is still being built)"}: a Python session resumes only where sidecars start from the same snapshot file (each build has its own hash seed); processes and machines that exchange sessions share one (the same cache directory, or a copy of its pyodide-*.snapshot and .sha256)`,
  );
}

function abortedWhileQueued(started: number): RunResult {
  return failedRun("pyodide", { language: "python" }, aborted("while it waited for a sidecar"), started);
}

export const createEngine: EngineFactory = async (options) => {
  // Every layer asked for is checked before anything starts: a missing one is an error now.
  await checkSeal(options.seal);
  if (options.seal.nodePermissions && !permissionFlag()) {
    throw new SealUnavailableError(
      "nodePermissions",
      `Node ${process.version} has no permission model; use Node ≥ 22 or set seal.nodePermissions to false`,
    );
  }
  const engine = new PyodideEngine(options);
  if (options.python.prewarm) {
    try {
      await Promise.all([engine.pool.prewarm(), engine.libraryChecked]);
    } catch (error) {
      await engine.destroy();
      throw error;
    }
  }
  return engine;
};
