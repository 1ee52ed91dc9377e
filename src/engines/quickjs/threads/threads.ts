// The JavaScript engine with guest code off the host's thread: a pool of worker threads, each holding a
// warm in-process QuickJS engine (worker.ts), plus one warm spare.
//
// - Admission is bounded (src/pool/gate.ts): up to MAX_RUNS_PER_WORKER runs per worker at once (counting
//   the overflow workers below, up to `javascript.maxWorkers`), then `javascript.maxQueue` waiting,
//   then `QueueFullError`. A worker's engine keeps that many warm cells, so admitted runs never build a
//   runtime from scratch. Runs that wait (a host call, a timer, a fetch) are **parked** and counted
//   apart (src/pool/parking-gate.ts): they do not count against their worker's `runsPerWorker`, so
//   another run is posted in their place, up to `javascript.maxParked` of them beside the running ones.
// - Scheduling: a run goes to the least-loaded worker that has room and is not **stalled** — held by
//   one long synchronous stretch (a CPU-bound guest), which the worker's heartbeat in shared memory
//   tells (handle.ts). A worker is one thread: whatever is queued on it waits for such a stretch to
//   end, up to the whole deadline, for work it has nothing to do with. So: runs posted to a worker
//   that then stalls, and not yet begun, are taken back (an atomic claim flag decides who owns a run,
//   protocol.ts) and sent elsewhere; and when every worker with room is stalled, the pool grows an
//   overflow worker (the warm spare steps in, a new spare starts), up to `javascript.maxWorkers`, so
//   the OS time-slices the benign run beside the spinning one instead of queueing it behind.
//   Overflow workers retire after OVERFLOW_IDLE_MS idle; runs that find no worker wait on the host, in
//   order, until one has room. Sessions stay on the `workers` base threads, pinned.
// - The worker marks in shared memory when it begins a run, before any guest code; the host watches
//   the run's deadline from then (deadline-watch.ts). Past `timeoutMs + GRACE.threadKillMs` with no
//   answer (a C builtin that never polls QuickJS's interrupt handler), the worker is **terminated** and the run
//   reports `timeout`. The spare takes the worker's place at once and a new spare starts behind it.
//   Runs that were posted to the dead worker but had not started move to another worker untouched;
//   runs that had started there (parked on a timer or host call beside the runaway) end as `crashed`.
//   Only the run whose guest code holds the thread (the worker's word, handle.ts `holder`) is ever
//   blamed: runs queued behind another run's turn are waiting, not stuck, and their deadline does not
//   count that turn (src/engines/lib/quickjs/turns.ts), here as in the worker.
// - Host functions, output chunks and the caller's signal are proxied over the worker's port: the
//   real host function runs here, on the host, with the worker's engine counting calls and enforcing
//   the deadline exactly as in-process.
// - A session is pinned to one worker (session.ts); when that worker is terminated the session is lost,
//   and says so.
//
// The decisions are pure functions in their own rooms (placement.ts: where a run goes; deadline-watch.ts:
// what to do about a run past its deadline), a run is a Job that lets go of what it holds when it
// settles (job.ts), host calls are answered in host-call.ts, and admission, drain and close are the
// shared EngineLifecycle (src/kit/lifecycle.ts). This file wires them to the worker threads.

import type { Engine } from "../../engine.ts";
import { InvalidOptionError } from "../../../core/errors.ts";
import type { EventInput } from "../../../core/events.ts";
import type { ResolvedRequest } from "../../../options/index.ts";
import type { GuestError, RunResult, WasmModuleSource } from "../../../core/types.ts";
import { GateAbortedError } from "../../../pool/gate.ts";
import { ParkingGate } from "../../../pool/parking-gate.ts";
import { Deadline, epochNow, GRACE } from "../../../kit/deadline.ts";
import { aborted, crashed, failedRun, timedOut } from "../../../kit/failures.ts";
import { EngineLifecycle } from "../../../kit/lifecycle.ts";
import { withNetwork } from "../../lib/quickjs/fetch-gate.ts";
import { verdict } from "./deadline-watch.ts";
import { STALL_MS, WorkerHandle } from "./handle.ts";
import { answerHostCall } from "./host-call.ts";
import { Job } from "./job.ts";
import { RunScope } from "../../../kit/scope.ts";
import { MAX_RUNS_PER_WORKER } from "../../../options/index.ts";
import { place } from "./placement.ts";
import { parseResult, REVOKED, type HostMessage, type WorkerMessage } from "./protocol.ts";
import { ThreadSession } from "./thread-session.ts";
import { resolveDemotion, type DemoteSetting } from "./priority.ts";

export { compiledQuickJS } from "./compile.ts";

type Handle = WorkerHandle<Job>;
const fail = (job: Job, error: GuestError): RunResult => failedRun("quickjs", job.req, error, job.startedAt);

/** An overflow worker idle this long is terminated (its ~30 MB go back). */
export const OVERFLOW_IDLE_MS = 30_000;
/** How often the host looks for stalled workers while runs are in flight. */
const TICK_MS = STALL_MS / 2;

/** How the pool is sized; see `JavaScriptOptions` in src/options/index.ts. */
export interface PoolSize {
  workers: number;
  maxWorkers: number;
  /** Runs posted to one worker at once, 1 to MAX_RUNS_PER_WORKER. */
  runsPerWorker: number;
  /**
   * Runs parked at once beside the running ones (waiting for a host call, a timer, a fetch): they take
   * no thread's turn, only memory. Default 0: a waiting run keeps its running slot.
   */
  maxParked?: number;
  maxQueue: number;
}

/** How the pool treats CPU-bound runs; see `JavaScriptOptions` in src/options/index.ts. */
export interface PoolPolicy {
  /** `javascript.demoteCpuBound`. */
  demoteCpuBound: DemoteSetting;
}
export class ThreadEngine implements Engine {
  readonly name = "quickjs" as const;
  /**
   * Restarts are told here, once per replaced thread (`#onWorkerLost`) and once per engine a live
   * worker rebuilt under a run (a `crashed` answer); the runs a lost thread takes down do not count again.
   */
  readonly reportsRestarts = true;
  readonly #slots: Handle[] = [];
  /** Workers beyond `workers`, grown while every worker with room is stalled. */
  #overflow: Handle[] = [];
  readonly #maxWorkers: number;
  readonly #runsPerWorker: number;
  /** Admitted runs waiting for a worker that has room and is not stalled, oldest first. */
  #pending: Job[] = [];
  #tick: NodeJS.Timeout | undefined;
  #spare: Handle | undefined;
  readonly #gate: ParkingGate;
  readonly #life = new EngineLifecycle<ThreadSession>("quickjs engine");
  #serial = 0;
  /** Set once every worker is being terminated (close or destroy): nothing new is posted after it. */
  #closedWhy: string | undefined;
  readonly #stats = { kills: 0, grown: 0, moved: 0 };
  /** Workers terminated because a run overran its deadline (for tests and benchmarks). */
  get kills(): number {
    return this.#stats.kills;
  }
  /** Overflow workers grown so far (for tests and benchmarks). */
  get grown(): number {
    return this.#stats.grown;
  }
  /** Runs taken back from a stalled worker (for tests and benchmarks). */
  get moved(): number {
    return this.#stats.moved;
  }

  readonly #wasmModule: WasmModuleSource | undefined;
  readonly #emit: ((event: EventInput) => void) | undefined;
  /** Whether runs may lower their thread's priority: settled by `warm` (false until then). */
  readonly #demotion: Promise<boolean | string>;
  #demote = false;

  /**
   * `wasmModule`: compiled once for every worker (see compile.ts); without it each worker loads its
   * own. `emit`: the sandbox's event channel, told of every worker the pool had to replace.
   */
  constructor(
    size: PoolSize,
    wasmModule?: WasmModuleSource,
    emit?: (event: EventInput) => void,
    policy: PoolPolicy = { demoteCpuBound: "auto" },
  ) {
    if (size.maxWorkers < size.workers)
      throw new InvalidOptionError("javascript.maxWorkers", `must be at least javascript.workers (${size.workers})`);
    this.#wasmModule = wasmModule;
    this.#emit = emit;
    if (!(size.runsPerWorker >= 1 && size.runsPerWorker <= MAX_RUNS_PER_WORKER))
      throw new InvalidOptionError("javascript.runsPerWorker", `must be from 1 to ${MAX_RUNS_PER_WORKER}`);
    this.#maxWorkers = size.maxWorkers;
    this.#runsPerWorker = size.runsPerWorker;
    this.#gate = new ParkingGate("javascript pool", {
      running: size.maxWorkers * size.runsPerWorker,
      parked: size.maxParked ?? 0,
      maxQueue: size.maxQueue,
    });
    this.#demotion = resolveDemotion(policy.demoteCpuBound);
    for (let i = 0; i < size.workers; i++) this.#slots.push(this.#start());
  }

  /**
   * Resolves when every worker and the spare are ready (the spare is what an overflow or a replacement
   * takes at once); rejects when one cannot start.
   */
  async warm(): Promise<void> {
    this.#spare ??= this.#start();
    const [demote] = await Promise.all([this.#demotion, ...[...this.#slots, this.#spare].map((w) => w.ready)]);
    if (typeof demote === "string") throw new InvalidOptionError("javascript.demoteCpuBound", demote);
    this.#demote = demote;
  }

  /** Whether CPU-bound runs lower their thread's priority (after `warm`). */
  get demotes(): boolean {
    return this.#demote;
  }

  /** Live worker threads, the overflow and the spare included. */
  get threads(): number {
    return this.#workers().filter((w) => !w.dead).length + (this.#spare && !this.#spare.dead ? 1 : 0);
  }

  /** Live overflow workers. */
  get overflowThreads(): number {
    return this.#overflow.filter((w) => !w.dead).length;
  }

  #workers(): Handle[] {
    return [...this.#slots, ...this.#overflow];
  }

  #start(): Handle {
    return new WorkerHandle(
      this.#wasmModule,
      (handle, m) => this.#onMessage(handle, m),
      (handle, why) => this.#onWorkerLost(handle, why),
    );
  }

  run(req: ResolvedRequest): Promise<RunResult> {
    return this.#life.run(() => this.#admit(req));
  }

  async #admit(req: ResolvedRequest): Promise<RunResult> {
    const startedAt = performance.now();
    if (!this.#gate.tryAcquire()) {
      try {
        await this.#gate.acquire(req.signal);
      } catch (error) {
        if (error instanceof GateAbortedError) return failedRun("quickjs", req, aborted(), startedAt);
        throw error;
      }
    }
    try {
      return await this.#dispatch(req, undefined, startedAt);
    } finally {
      this.#gate.release();
    }
  }

  /** The least-loaded live base worker, for a session to be pinned to; ties go to the first one. */
  async #pick(): Promise<Handle> {
    let best: Handle | undefined;
    for (let i = 0; i < this.#slots.length; i++) {
      let w = this.#slots[i]!;
      if (w.dead) w = this.#replace(i);
      if (!best || w.load < best.load) best = w;
    }
    await best!.ready;
    return best!;
  }

  #dispatch(given: ResolvedRequest, session: ThreadSession | undefined, startedAt: number): Promise<RunResult> {
    return new Promise<RunResult>((resolve) => {
      const scope = new RunScope();
      try {
        // The network gate lives here, on the host: its bridge functions join the request's host
        // functions, which the worker proxies back by name like any other (see quickjs/fetch.ts). The
        // scope closes it (every request and socket of the run) when the run settles.
        const req = withNetwork(given, scope);
        const abort = req.signal ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
        if (abort && req.signal?.aborted) Atomics.store(abort, 0, 1);
        const wire = {
          language: req.language,
          code: req.code,
          files: req.files,
          limits: req.limits,
          hostNames: Object.keys(req.hostFunctions),
          output: req.onOutput !== undefined,
          display: req.onResult !== undefined,
          abort,
          claim: new Int32Array(new SharedArrayBuffer(4)),
          demote: this.#demote,
        };
        const job = new Job({ id: ++this.#serial, req, wire, session, startedAt, scope }, resolve);
        if (req.signal && abort) {
          const signal = req.signal;
          const onAbort = () => this.#onAbort(job, abort);
          signal.addEventListener("abort", onAbort, { once: true });
          scope.defer(() => signal.removeEventListener("abort", onAbort));
        }
        this.#send(job);
      } catch (error) {
        scope.close(); // the run never started: it rejects, and holds nothing
        throw error;
      }
    });
  }

  #send(job: Job): void {
    if (this.#closedWhy !== undefined) {
      this.#settle(job, fail(job, crashed(`${this.#closedWhy} before the run started`)));
      return;
    }
    if (!job.session) {
      this.#pending.push(job);
      this.#place();
      return;
    }
    const handle = job.session.handle;
    if (handle.dead) {
      this.#settle(job, fail(job, job.session.lostError()));
      return;
    }
    this.#post(handle, job);
  }

  #post(handle: Handle, job: Job): void {
    clearTimeout(handle.idleTimer);
    handle.jobs.set(job.id, job);
    // A fresh claim flag for every posting: a flag the host revoked stays revoked.
    job.wire.claim = new Int32Array(new SharedArrayBuffer(4));
    const m: HostMessage = job.session
      ? { t: "run", id: job.id, req: job.wire, session: job.session.id }
      : { t: "run", id: job.id, req: job.wire };
    job.seq = handle.postRun(m);
    this.#watch(handle, job, job.req.limits.timeoutMs);
    this.#ensureTick();
  }

  /** Posts waiting runs, oldest first, while some worker can take one. */
  #place(): void {
    while (this.#pending.length > 0 && this.#closedWhy === undefined) {
      const job = this.#pending[0]!;
      if (job.settled) {
        this.#pending.shift();
        continue;
      }
      const handle = this.#choose();
      if (!handle) break;
      this.#pending.shift();
      this.#post(handle, job);
    }
    if (this.#pending.length > 0) this.#ensureTick();
  }

  /** Where the next waiting run goes (placement.ts decides; this carries it out). */
  #choose(): Handle | undefined {
    for (let i = 0; i < this.#slots.length; i++) if (this.#slots[i]!.dead) this.#replace(i);
    const decision = place(this.#workers(), {
      now: epochNow(),
      runsPerWorker: this.#runsPerWorker,
      closed: !this.#life.open,
    });
    if (decision === "wait") return undefined;
    if (decision === "grow") return this.#grow();
    return decision.post;
  }

  /** One more overflow worker (the warm spare, a new spare behind it), if under `maxWorkers`. */
  #grow(): Handle | undefined {
    const live = this.#workers().filter((w) => !w.dead).length;
    if (live >= this.#maxWorkers) return undefined;
    const spare = this.#spare && !this.#spare.dead ? this.#spare : this.#start();
    this.#spare = this.#start();
    spare.overflow = true;
    this.#overflow.push(spare);
    this.#stats.grown++;
    if (spare.started) return spare;
    // Not warm yet: it takes runs once it is (#choose skips it until then).
    spare.ready.then(
      () => this.#place(),
      () => undefined,
    );
    return undefined;
  }

  /**
   * While runs are in flight: takes back runs queued on a stalled worker that have not begun (the
   * claim flag makes sure the worker never starts them), and places waiting runs.
   */
  #ensureTick(): void {
    if (this.#tick !== undefined) return;
    this.#tick = setInterval(() => this.#onTick(), TICK_MS);
    this.#tick.unref();
  }

  #onTick(): void {
    const now = epochNow();
    const workers = this.#workers();
    const taken: Job[] = [];
    for (const w of workers) {
      if (!w.stalled(now)) continue;
      for (const job of [...w.jobs.values()]) {
        if (job.session || job.settled || w.begunAt(job.seq) !== undefined) continue;
        if (Atomics.compareExchange(job.wire.claim, 0, 0, REVOKED) !== 0) continue; // it just began
        clearTimeout(job.watchdog);
        w.forget(job.id);
        taken.push(job);
        this.#stats.moved++;
      }
    }
    // Taken-back runs were admitted before anything still waiting: they go first.
    if (taken.length > 0) this.#pending.unshift(...taken.sort((a, b) => a.id - b.id));
    this.#place();
    if (this.#pending.length === 0 && workers.every((w) => w.jobs.size === 0)) {
      clearInterval(this.#tick);
      this.#tick = undefined;
    }
  }

  /**
   * The deadline watch (deadline-watch.ts gives the verdict). At a run's deadline its thread gets its
   * priority back (priority.ts), so the interrupt that ends the run is reached at once. A run that began
   * more than `timeoutMs + GRACE.threadKillMs` ago and has not been answered then has its worker
   * terminated, unless the thread was starved rather than stuck. A run still queued in its worker is
   * looked at again later.
   */
  #watch(handle: Handle, job: Job, afterMs: number): void {
    clearTimeout(job.watchdog);
    job.watchdog = setTimeout(() => {
      if (job.settled || handle.dead || !handle.jobs.has(job.id)) return;
      const deadline = this.#deadline(handle, job);
      const now = epochNow();
      const past = deadline?.passed(0, now) ?? false;
      const cpuNs = past ? handle.cpuNs(true) : undefined;
      if (past) job.cpuAtDeadline ??= cpuNs;
      const holder = handle.holder();
      const v = verdict({
        now,
        deadline,
        heldByOther: holder !== 0 && holder !== job.seq,
        timeoutMs: job.req.limits.timeoutMs,
        lastBeat: handle.lastBeat(),
        cpuNs,
        cpuAtDeadline: job.cpuAtDeadline,
        beatMs: STALL_MS,
      });
      if (v === "kill") return this.#kill(handle, job, "timeout");
      if (v.lift) handle.lift();
      this.#watch(handle, job, v.sleep);
    }, afterMs);
  }

  /**
   * The run's deadline from when its worker began it (the epoch clock its stamps use), if it has, moved
   * later by the time its thread spent on other runs' guest code (its credit, src/engines/lib/quickjs/turns.ts),
   * exactly as the worker's own engine moves it.
   */
  #deadline(handle: Handle, job: Job): Deadline | undefined {
    const begun = handle.begunAt(job.seq);
    if (begun === undefined) return undefined;
    return new Deadline(job.req.limits.timeoutMs, begun + handle.creditMs(job.seq, epochNow()));
  }

  #onAbort(job: Job, flag: Int32Array): void {
    Atomics.store(flag, 0, 1);
    const handle = this.#holder(job);
    if (!handle) {
      // Still waiting on the host: it ends here, no worker sees it.
      const at = this.#pending.indexOf(job);
      if (at >= 0) {
        this.#pending.splice(at, 1);
        this.#settle(job, fail(job, aborted()));
      }
      return;
    }
    handle.post({ t: "abort", id: job.id });
    handle.lift(); // a thread that gave way reaches the abort flag at once
    if (handle.begunAt(job.seq) === undefined) return; // the worker sees the flag when it starts the run
    // A run stuck in a builtin sees neither the flag nor the message: the grace ends it.
    clearTimeout(job.watchdog);
    job.watchdog = setTimeout(() => this.#kill(handle, job, "aborted"), GRACE.threadKillMs);
  }

  #holder(job: Job): Handle | undefined {
    for (const w of this.#workers()) if (w.jobs.has(job.id)) return w;
    return undefined;
  }

  #onMessage(handle: Handle, m: WorkerMessage): void {
    const job = "id" in m ? handle.jobs.get(m.id) : undefined;
    switch (m.t) {
      case "output":
        if (!job || job.settled) return;
        // The worker's own sink caps output; this bound only stops a worker that ignores it.
        job.outputChars += m.text.length;
        if (job.outputChars > job.req.limits.maxOutputBytes + 256) return;
        job.req.onOutput?.({ stream: m.stream, text: m.text });
        return;
      case "display":
        // The worker's run counted it; the host parses and counts again before the caller sees it.
        if (job && !job.settled) job.display.add(m.item);
        return;
      case "call":
        if (job && !job.settled) answerHostCall(handle, job, m);
        return;
      case "call-end":
        job?.calls.get(m.call)?.abort(new Error("the run has ended"));
        job?.calls.delete(m.call);
        return;
      case "park":
        if (job && !job.settled) this.#park(job, m.parked, handle);
        return;
      case "done": {
        if (!job) return;
        handle.forget(job.id);
        const parsed = parseResult(m, job.req.language, job.req.limits);
        if (typeof parsed === "string") {
          // A worker that answers out of shape is not trusted with another run.
          this.#settle(job, fail(job, crashed(`the worker's answer was malformed (${parsed})`)));
          this.#onWorkerLost(handle, `its answer was malformed (${parsed})`);
          return;
        }
        parsed.stats.wallMs = performance.now() - job.startedAt;
        if (!parsed.ok && parsed.error.kind === "crashed")
          this.#emit?.({ type: "restart", engine: "quickjs", reason: "the engine in a worker thread crashed" });
        this.#settle(job, parsed);
        if (handle.priorityStuck && handle.load === 0 && handle.sessions.size === 0) {
          // It would serve every later run at the lowest priority: retired, not reported as a restart.
          handle.terminate();
          this.#onWorkerLost(handle, "its thread's priority could not be restored");
        } else this.#idle(handle);
        this.#place();
        return;
      }
      case "session-opened":
        handle.sessions.get(m.session)?.opened(m.error, m.rejected);
        return;
      case "session-saved":
        handle.sessions.get(m.session)?.saved?.(m);
        return;
      case "ready": // handled by WorkerHandle
        return;
    }
  }

  /** An overflow worker with nothing on it retires after OVERFLOW_IDLE_MS, unless work comes first. */
  #idle(handle: Handle): void {
    if (!handle.overflow || handle.load > 0 || handle.dead) return;
    clearTimeout(handle.idleTimer);
    handle.idleTimer = setTimeout(() => {
      if (handle.load > 0 || handle.dead) return;
      this.#overflow = this.#overflow.filter((w) => w !== handle);
      handle.terminate();
    }, OVERFLOW_IDLE_MS);
    handle.idleTimer.unref();
  }

  /**
   * A run waits for an event (a host call's answer, a timer, a fetch) with nothing to do until then, or
   * stops waiting (the worker's word). A parked run gives its thread's turn to a new run (placement
   * counts running runs only against `runsPerWorker`); a session's run is not admitted through the gate,
   * so only its thread's count changes.
   */
  #park(job: Job, parked: boolean, on?: Handle): void {
    if (parked === job.parked) return;
    on?.parked(job, parked);
    job.parked = parked;
    if (!job.session) this.#gate.park(parked);
    if (parked) this.#place();
  }

  /** Runs parked and running now, and callers waiting to be admitted (for tests and benchmarks). */
  get admission(): { running: number; parked: number; waiting: number } {
    return this.#gate.stats;
  }

  /** The one way a run ends here: everything it holds is let go before its caller hears the result. */
  #settle(job: Job, result: RunResult): void {
    if (!job.settled) this.#park(job, false);
    job.settle(result);
  }

  /**
   * Terminates a worker whose run overran its deadline (or its abort) by more than the grace. The run
   * gets the host's verdict; every other run on that worker is moved or ended, its sessions are lost.
   */
  #kill(handle: Handle, culprit: Job, kind: "timeout" | "aborted"): void {
    if (handle.dead || culprit.settled) return;
    this.#stats.kills++;
    const error = kind === "timeout" ? timedOut(culprit.req.limits.timeoutMs, "terminated") : aborted();
    this.#settle(culprit, fail(culprit, error));
    this.#onWorkerLost(handle, "a run on it overran its deadline and the thread was terminated");
  }

  /** A worker is gone (terminated, exited, threw, or misbehaved): move or end its runs, replace it. */
  #onWorkerLost(handle: Handle, why: string): void {
    const retired = handle.dead && handle.jobs.size === 0 && handle.sessions.size === 0;
    if (!handle.dead) handle.terminate();
    clearTimeout(handle.idleTimer);
    // A real restart (not a retirement, not the close): the event channel hears it, once per thread.
    if (!retired && this.#closedWhy === undefined && handle.started && !handle.reported) {
      handle.reported = true;
      this.#emit?.({ type: "restart", engine: "quickjs", reason: `a worker thread was replaced: ${why}` });
    }
    this.#overflow = this.#overflow.filter((w) => w !== handle);
    const jobs = [...handle.jobs.values()];
    handle.jobs.clear();
    for (const s of handle.sessions.values()) s.lose(why);
    handle.sessions.clear();
    // A worker that never started is not replaced here (that could loop); `#pick` retries on demand.
    const i = this.#slots.indexOf(handle);
    if (i >= 0 && !!this.#life.open && handle.started) this.#replace(i);
    if (this.#spare === handle) this.#spare = !this.#life.open || !handle.started ? undefined : this.#start();
    const now = epochNow();
    for (const job of jobs) {
      const deadline = this.#deadline(handle, job);
      if (job.settled) continue;
      clearTimeout(job.watchdog);
      if (job.session) {
        this.#settle(job, fail(job, job.session.lostError()));
      } else if (deadline === undefined && !!this.#life.open) {
        this.#send(job); // no guest code of it ran: it may run elsewhere
      } else if (deadline?.passed(0, now) === true) {
        this.#settle(job, fail(job, timedOut(job.req.limits.timeoutMs, "terminated")));
      } else {
        this.#settle(
          job,
          fail(job, crashed(`the worker thread running this code was lost (${why}); run the code again`)),
        );
      }
    }
  }

  /** Puts the spare (or a new worker) in slot `i` and starts a new spare. */
  #replace(i: number): Handle {
    const spare = this.#spare && !this.#spare.dead ? this.#spare : this.#start();
    this.#slots[i] = spare;
    this.#spare = !this.#life.open ? undefined : this.#start();
    return spare;
  }

  /**
   * A session pinned to a worker: new, resumed from state bytes, or a fork of a session (on that
   * session's worker, where its state is) — session-state.ts.
   */
  async openSession(
    from?: { bytes: Uint8Array; maxMemoryBytes: number } | { forkOf: ThreadSession },
  ): Promise<ThreadSession> {
    this.#life.admit();
    const handle = from && "forkOf" in from ? from.forkOf.handle : await this.#pick();
    let remove: () => void = () => undefined;
    const session = new ThreadSession(this, handle, ++this.#serial, () => remove());
    remove = this.#life.addSession(session);
    handle.sessions.set(session.id, session);
    // Without a job in flight the worker is unref'd: count the open so the process waits for its answer.
    handle.opening++;
    handle.post(
      !from
        ? { t: "session-open", session: session.id }
        : "forkOf" in from
          ? { t: "session-open", session: session.id, forkOf: from.forkOf.id }
          : { t: "session-open", session: session.id, state: from.bytes, maxMemoryBytes: from.maxMemoryBytes },
    );
    try {
      await session.whenOpen;
    } finally {
      handle.opening--;
      handle.updateRef();
    }
    return session;
  }

  /** @internal used by ThreadSession */
  sessionRun(session: ThreadSession, req: ResolvedRequest): Promise<RunResult> {
    return this.#life.track(this.#dispatch(req, session, performance.now()));
  }

  close(): Promise<void> {
    this.#gate.close();
    return this.#life.close(() => Promise.resolve(this.#terminateAll("the engine was closed")));
  }

  destroy(): Promise<void> {
    this.#gate.close();
    return this.#life.destroy(async () => {
      this.#terminateAll("the sandbox was destroyed");
      await this.#life.drain();
    });
  }

  #terminateAll(why: string): void {
    this.#closedWhy = why;
    clearInterval(this.#tick);
    this.#tick = undefined;
    for (const w of [...this.#workers(), ...(this.#spare ? [this.#spare] : [])]) {
      w.terminate();
      this.#onWorkerLost(w, why);
    }
    this.#spare = undefined;
    for (const job of this.#pending.splice(0)) this.#settle(job, fail(job, crashed(`${why} before the run started`)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
