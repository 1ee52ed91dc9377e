// The native tier: the host's Debian python3 (numpy, pandas, matplotlib at native speed) inside the
// jail, one jailed process per run (stateless by construction: nothing survives the process).
//
// ctypes is importable here, so guest code can issue any syscall it likes: the mount namespace (only
// the interpreter, its libraries and packages, read-only; a tmpfs scratch) and the seccomp allowlist
// (no socket, no fork, no kill, no ptrace, no namespaces) are the real boundary, not Python.
//
// A run: take the pre-started jail (or spawn one) → arm its deadline → write {code, files, caps} to
// stdin → the driver (driver.py) writes input files into /tmp/work, runs the code through the shared
// harness (../python/harness.py), collects the files the run wrote, sends one JSON line on fd 4 and
// leaves with os._exit → the host validates that untrusted line and builds the RunResult. The guest's
// stdout/stderr arrive on fds 5/6, capped together at maxOutputBytes. No result line: the way the jail
// ended (deadline, OOM kill, SIGSYS, crash) says what happened.
//
// Concurrency: at most `python.pool` runs hold a jail at once; further runs wait in a FIFO queue of at
// most `python.maxQueue` (then QueueFullError), the same bound and the same queue code (WarmPool, whose
// members here are just run slots) as the Pyodide engine. Without it, N concurrent runs would start N
// jailed interpreters at once.

import { Deadline } from "../../kit/deadline.ts";
import { EngineLifecycle } from "../../kit/lifecycle.ts";
import { EngineUnavailableError } from "../../core/errors.ts";
import { aborted as abortedError, failedRun, outputLimit } from "../../kit/failures.ts";
import { existsSync } from "node:fs";
import type { Duplex } from "node:stream";
import { checkSeal, isExecutable, spawnJailed, type JailedProcess } from "../../jail/index.ts";
import type { ResolvedOptions, ResolvedRequest } from "../../options/index.ts";
import { WarmPool } from "../../pool/pool.ts";
import type { Limits, RunResult } from "../../core/types.ts";
import type { Engine, EngineFactory } from "../engine.ts";
import { leasedLibrary, type InstalledLibrary } from "../../library/library.ts";
import { checkLibrary } from "../../library/verify.ts";
import { pythonLayout, type PythonLayout } from "./binds.ts";
import { NATIVE_APT_HINT, NATIVE_PYTHON } from "./doctor.ts";
import { BRIDGE, DISPLAY, DRIVER, HARNESS, nativeJailSpec, openNetDir, withProxy } from "./jail.ts";
import { WarmParent } from "./warm.ts";
import { LIGHT_PRELOAD, LightParents } from "./light.ts";
import { needsStack } from "./route.ts";
import { nativeBackend } from "./sessions.ts";
import { SessionKeeper } from "../sessions/keeper.ts";
import type { DataSession } from "../sessions/data-session.ts";
import type { LiveState } from "../sessions/backend.ts";
import { runInParent } from "./warm-run.ts";
import { deadlineError, driverRequest, exitWithoutResult, runFrame, type RunFrame } from "./run-frame.ts";
import { finish, parseResult } from "./result-line.ts";

export { NATIVE_RUNTIME_FILES } from "./jail.ts";
import type { NetworkProxy } from "../../network/proxy.ts";
import { openRunNetwork } from "../../network/open.ts";

export const createEngine: EngineFactory = async (options) => {
  if (process.platform !== "linux")
    throw new EngineUnavailableError("native", `it runs on Linux only; this is ${process.platform}`);
  if (!isExecutable(NATIVE_PYTHON)) {
    throw new EngineUnavailableError("native", `${NATIVE_PYTHON} is not installed (Debian: ${NATIVE_APT_HINT})`);
  }
  for (const file of [DRIVER, HARNESS, BRIDGE, DISPLAY])
    if (!existsSync(file)) throw new EngineUnavailableError("native", `${file} is missing from the package`);
  if (options.network && !options.seal.bubblewrap)
    throw new EngineUnavailableError(
      "native",
      "the network option needs seal.bubblewrap on this tier: the jail's own empty network namespace is what makes the host proxy the only way out",
    );
  // A seal layer asked for and unavailable is an error here, before any code runs: never an unjailed interpreter.
  await checkSeal(options.seal);
  const engine = new NativeEngine(options, pythonLayout(NATIVE_PYTHON));
  // The library is checked against setup's record before any jail binds it (IntegrityError naming the file).
  if (engine.library) await checkLibrary(engine.library, "native", options.emit);
  // The slots are free to make: have them all ready, so the first runs take one at once.
  try {
    await Promise.all([engine.slots.prewarm().then(() => engine.slots.whenFull()), engine.light?.fill()]);
  } catch (error) {
    // A parent that cannot start is the engine's error; the ones that did start go with it.
    await engine.destroy();
    throw error;
  }
  engine.prestart();
  return engine;
};

export class NativeEngine implements Engine {
  readonly name = "native" as const;
  readonly #options: ResolvedOptions;
  readonly #layout: PythonLayout;
  readonly #live = new Set<JailedProcess>();
  /** Each jail's host proxy (sandboxes with the network option only). */
  readonly #proxies = new WeakMap<JailedProcess, NetworkProxy>();
  readonly #life = new EngineLifecycle("native python engine");
  /**
   * Permission to hold a jail: `python.pool` slots, `python.maxQueue` runs waiting for one. A slot
   * is a token, not a process (each run still gets its own jail), so it never dies and never resets.
   */
  readonly slots: WarmPool<object>;
  /**
   * The warm parents (one per slot, seal.bubblewrap on): each run is a child of one. Without
   * bubblewrap there are no namespaces to give a child, and runs get a cold jail each as before.
   */
  readonly #parents = new Set<WarmParent>();
  readonly warm: boolean;
  /**
   * Light parents (light.ts), for stateless runs that import only the standard library (route.ts):
   * with `python.lightParent` and a `python.preload` to leave out, on the warm path only.
   */
  readonly light: LightParents | undefined;
  /** Native sessions (sessions.ts): each a warm parent taken out of the pool, serving one live child. */
  readonly keeper: SessionKeeper<LiveState>;

  /** The same library the Pyodide tier mounts, so both tiers answer the same imports with the lock's versions. */
  readonly library: InstalledLibrary | undefined;

  constructor(options: ResolvedOptions, layout: PythonLayout) {
    this.#options = options;
    this.#layout = layout;
    this.library = options.python.packages ? leasedLibrary() : undefined;
    this.warm = options.seal.bubblewrap;
    this.light =
      this.warm && options.python.lightParent && options.python.preload.length > 0
        ? new LightParents(options.python.pool, () => this.startParent(LIGHT_PRELOAD))
        : undefined;
    this.slots = new WarmPool<object>({
      name: "native python",
      size: options.python.pool,
      maxQueue: options.python.maxQueue,
      create: () => (this.warm ? this.startParent() : Promise.resolve({})),
      destroy: (slot) => (slot instanceof WarmParent ? slot.close() : Promise.resolve()),
      isAlive: (slot) => !(slot instanceof WarmParent) || slot.alive,
    });
    this.keeper = new SessionKeeper<LiveState>(
      nativeBackend({ maxSessions: options.python.maxSessions, takeParent: (signal) => this.#takeParent(signal) }),
      options,
    );
  }

  /** A session's parent: a warm slot taken out of the pool for good (the pool starts another). */
  async #takeParent(signal?: AbortSignal): Promise<WarmParent | undefined> {
    if (!this.warm) return undefined;
    const slot = await this.slots.acquire(signal);
    if (!(slot instanceof WarmParent)) {
      this.slots.release(slot, true);
      return undefined;
    }
    this.slots.detach(slot);
    return slot;
  }

  openSession(): Promise<DataSession<LiveState>> {
    return this.#life.run(() => this.keeper.open());
  }

  /** The live warm parents' jail pids, the stack's then the light ones (tests check a run left its parent alive). */
  get parentPids(): number[] {
    return [...this.stackParentPids, ...(this.light?.pids ?? [])];
  }

  /** The live stack parents' jail pids (python.preload imported): slots and sessions'. */
  get stackParentPids(): number[] {
    return [...this.#parents].filter((p) => p.alive).map((p) => p.jail.pid);
  }

  /**
   * Whether a stateless run with this code and these files goes to a light parent (route.ts), when
   * one is free: the bench and the tests check the route they measure.
   */
  routesLight(request: Pick<ResolvedRequest, "code" | "files">): boolean {
    if (!this.light) return false;
    const stack = [...this.#parents].find((p) => p.loaded.size > 0)?.loaded ?? new Set<string>();
    const parents = { stdlib: this.light.stdlib, light: this.light.loaded, stack };
    return !needsStack(request, parents, this.#options.python.preload);
  }

  /**
   * A warm parent for the sandbox's default limits (a slot, or a session's own); `preload` given: a
   * light one (light.ts), which the light parents hold, not the slots.
   */
  async startParent(preload?: readonly string[]): Promise<WarmParent> {
    const parent = await WarmParent.start({
      layout: this.#layout,
      seal: this.#options.seal,
      limits: this.#options.limits,
      library: this.library,
      preload: preload ?? this.#options.python.preload,
      network: this.#options.network !== undefined,
    });
    if (preload) return parent;
    this.#parents.add(parent);
    parent.jail.exited.then(
      () => this.#parents.delete(parent),
      () => undefined,
    );
    return parent;
  }

  /**
   * `python.pool` jails are kept started and waiting for their request (the interpreter, the driver and
   * the harness loaded: ~100 ms of start-up off every run), as many as may run at once, so a run never
   * waits for a cold interpreter while a slot is free; each one taken is replaced in the background.
   * A spare has run no code, so a run that takes it starts from nothing, as a fresh one would. Spares
   * are built for the sandbox's default limits; a run with other limits (memory, files, timeout) gets
   * a fresh jail.
   */
  readonly #spares: { jail: JailedProcess; key: string; dead: boolean }[] = [];
  /** Spares being started now (they count toward the target, so a burst does not over-start). */
  #starting = 0;

  /** Ready spares right now (tests and the bench watch the refill). */
  get spares(): number {
    if (this.warm) return [...this.#parents].filter((p) => p.readyNow).length;
    return this.#spares.filter((s) => !s.dead).length;
  }

  #takeSpare(limits: Limits): JailedProcess | undefined {
    const key = limitsKey(limits);
    // A spare built for other limits stays for the next run that matches them.
    const i = this.#spares.findIndex((s) => !s.dead && s.key === key);
    if (i < 0) return undefined;
    const [spare] = this.#spares.splice(i, 1);
    setParked(spare!.jail, false);
    return spare!.jail;
  }

  /** Starts the spares in the background (createEngine calls it; runs call it after taking one). */
  prestart(): void {
    if (!this.warm) this.#refillSpare();
  }

  #refillSpare(): void {
    const target = this.#options.python.pool;
    while (!!this.#life.open && this.spares + this.#starting < target) {
      this.#starting++;
      const limits = this.#options.limits;
      this.#spawn(limits).then(
        (jail) => {
          this.#starting--;
          if (!this.#life.open || this.spares >= target) {
            jail.kill();
            return;
          }
          const spare = { jail, key: limitsKey(limits), dead: false };
          setParked(jail, true);
          const gone = () => {
            spare.dead = true;
            const at = this.#spares.indexOf(spare);
            if (at >= 0) this.#spares.splice(at, 1);
          };
          jail.exited.then(gone, gone);
          this.#spares.push(spare);
        },
        // The next run spawns its own jail and surfaces the error there.
        () => {
          this.#starting--;
        },
      );
    }
  }

  async #spawn(limits: Limits): Promise<JailedProcess> {
    const spec = nativeJailSpec(this.#layout, this.#options.seal, limits, this.library);
    const net = this.#options.network ? await openNetDir(this.#options.seal) : undefined;
    if (net) withProxy(spec, net);
    let jail: JailedProcess;
    try {
      jail = await spawnJailed(spec);
    } catch (error) {
      if (net) await net.close();
      throw error;
    }
    this.#live.add(jail);
    if (net) this.#proxies.set(jail, net.proxy);
    const gone = async () => {
      this.#live.delete(jail);
      if (net) await net.close();
    };
    // net.close() never throws (it removes its directory whatever happens); the handler keeps a
    // future change from turning a failed close into an unhandled rejection.
    jail.exited.then(gone, gone).catch(() => undefined);
    return jail;
  }

  run(request: ResolvedRequest): Promise<RunResult> {
    return this.#life.run(() => this.#queued(request));
  }

  /** Waits for a slot (QueueFullError when the queue is full), runs, gives the slot back. */
  async #queued(request: ResolvedRequest): Promise<RunResult> {
    const started = performance.now();
    let slot: object;
    try {
      slot = await this.slots.acquire(request.signal);
    } catch (error) {
      // Aborted while waiting for a slot: a result like any other abort, not a throw.
      if (request.signal?.aborted) {
        return failedRun("native", request, abortedError("while it waited for a free slot (python.pool)"), started);
      }
      throw error;
    }
    try {
      if (slot instanceof WarmParent && slot.fits(request.limits)) {
        const light = this.routesLight(request) ? this.light?.take() : undefined;
        if (!light) return await this.#runWarm(slot, request, started);
        try {
          return await this.#runWarm(light, request, started);
        } finally {
          this.light!.give(light);
        }
      }
      return await this.#run(request, started);
    } finally {
      this.slots.release(slot, !(slot instanceof WarmParent) || slot.alive);
    }
  }

  /** A run as a child of a warm parent (warm-run.ts). */
  #runWarm(parent: WarmParent, request: ResolvedRequest, started: number): Promise<RunResult> {
    return runInParent({ parent, request, started });
  }

  /** `started`: when the engine took the run; queueing counts in wallMs, as on Pyodide. */
  async #run(request: ResolvedRequest, started: number): Promise<RunResult> {
    const { limits } = request;
    const frame = runFrame(request, started);
    if (request.signal?.aborted) return { ...frame.base(), ok: false, error: abortedError() };

    // A pre-started process built for these limits, or a fresh one. Either way it has run nothing yet.
    const jail = this.#takeSpare(limits) ?? (await this.#spawn(limits));
    if (!this.warm) this.#refillSpare();
    if (request.signal?.aborted) {
      jail.kill();
      return { ...frame.base(), ok: false, error: abortedError() };
    }
    const deadline = new Deadline(limits.timeoutMs);
    jail.setDeadline(deadline.left());
    // The run's network decides every request the jail's proxy sees, until the run is over.
    const proxy = this.#proxies.get(jail);
    const network = proxy ? openRunNetwork(request, "native", { deadline }) : undefined;
    proxy?.attach({ network, engine: "native", emit: request.emit });
    try {
      return await this.#runIn(jail, request, deadline, frame, proxy !== undefined && network !== undefined);
    } finally {
      network?.close();
      proxy?.detach();
    }
  }

  async #runIn(
    jail: JailedProcess,
    request: ResolvedRequest,
    deadline: Deadline,
    { output, pipe, base }: RunFrame,
    withNetwork: boolean,
  ): Promise<RunResult> {
    const { limits } = request;
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      jail.kill();
    };
    request.signal?.addEventListener("abort", onAbort, { once: true });

    const ended = (s: NodeJS.ReadableStream) =>
      new Promise<void>((resolve) => {
        s.once("end", resolve);
        s.once("close", resolve);
        s.once("error", () => resolve());
      });
    // The jail's own stdio carry only what is written before the driver moves the guest's output to
    // fds 5/6 (an interpreter that cannot start, bubblewrap's errors): kept for crash messages.
    jail.child.stdout.on("data", (c: Buffer) => output.push("stdout", c));
    jail.child.stderr.on("data", (c: Buffer) => output.push("stderr", c));
    const [resultPipe, guestStdout, guestStderr] = jail.pipes as [Duplex, Duplex, Duplex];
    guestStdout.on("data", (c: Buffer) => output.push("stdout", c));
    guestStderr.on("data", (c: Buffer) => output.push("stderr", c));
    resultPipe.on("data", (c: Buffer) => pipe.push(c));
    const guestDone = Promise.all([ended(resultPipe), ended(guestStdout), ended(guestStderr)]);
    const jailStdioDone = Promise.all([ended(jail.child.stdout), ended(jail.child.stderr)]);

    const { body, observed } = driverRequest(request, deadline, withNetwork);
    jail.child.stdin.end(JSON.stringify(body));

    // The guest's pipes end when the driver exits: with a valid result line that is the end of the
    // run, and the jail (whose namespaces take ~15 ms to tear down) is left to finish on its own.
    await Promise.race([guestDone, jail.exited]);
    const early = aborted || pipe.overflow ? undefined : parseResult(pipe.resultText(), limits, observed());
    if (early) {
      request.signal?.removeEventListener("abort", onAbort);
      const stats = jail.memoryStats();
      jail.kill();
      const peak = stats.peakMemoryBytes ?? early.maxrss;
      const result = base(peak !== undefined ? { peakMemoryBytes: peak } : {});
      return finish(result, early.result, pipe);
    }

    // No result: find out why from the way the jail ended.
    const exit = await jail.exited;
    // Every writer is dead once the jail is gone; don't wait forever on a stream that never closes.
    await Promise.race([Promise.all([guestDone, jailStdioDone]), new Promise((r) => setTimeout(r, 1000).unref())]);
    request.signal?.removeEventListener("abort", onAbort);

    const result = base(exit.peakMemoryBytes !== undefined ? { peakMemoryBytes: exit.peakMemoryBytes } : {});
    if (aborted) return { ...result, ok: false, error: abortedError() };
    if (exit.timedOut) return { ...result, ok: false, error: deadlineError(exit, request) };
    // The result line is capped at what an honest driver can send (the value's and the files' caps):
    // past it the guest wrote to fd 4 itself, and what it returned was over the result's cap.
    if (pipe.overflow) return { ...result, ok: false, error: outputLimit("maxResultBytes", limits.maxResultBytes) };
    // A result line can also arrive with the exit (a process that ended before its pipes were read).
    const late = parseResult(pipe.resultText(), limits, observed());
    if (late) {
      if (result.stats.peakMemoryBytes === undefined && late.maxrss !== undefined)
        result.stats.peakMemoryBytes = late.maxrss;
      return finish(result, late.result, pipe);
    }
    return { ...result, ok: false, error: exitWithoutResult(exit, request, result.stderr, jail.memoryMechanism) };
  }

  /** Queued runs are tracked too: they get their slot and finish before the slots close. */
  close(): Promise<void> {
    return this.#life.close(async () => {
      await this.keeper.close();
      await this.#free();
    });
  }

  destroy(): Promise<void> {
    return this.#life.destroy(async () => {
      await this.#free();
      await this.keeper.close();
    });
  }

  async #free(): Promise<void> {
    // Waiting runs fail with ClosedError; later runs too.
    await this.slots.destroy();
    await Promise.allSettled([...[...this.#parents].map((p) => p.close()), this.light?.close()]);
    this.#spares.length = 0;
    for (const jail of this.#live) {
      // a parked spare's handles are unref'd: ref them again, or the host could exit before it is reaped
      setParked(jail, false);
      jail.kill();
    }
    await Promise.allSettled([...this.#live].map((j) => j.exited));
  }
}

/**
 * A parked spare must not keep the host's event loop alive: a program that forgets `close()` still
 * exits (and `--die-with-parent` takes the spare with it).
 */
function setParked(jail: JailedProcess, parked: boolean): void {
  const handles = [jail.child, jail.child.stdin, jail.child.stdout, jail.child.stderr, ...jail.pipes] as {
    ref?: () => void;
    unref?: () => void;
  }[];
  for (const h of handles) (parked ? h.unref : h.ref)?.call(h);
}

/** The limits a jail is built with; a spare serves a run only when these match. */
function limitsKey(limits: Limits): string {
  return JSON.stringify([limits.timeoutMs, limits.memoryMb, limits.maxFileBytes]);
}
