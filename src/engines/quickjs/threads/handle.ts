// One QuickJS worker thread as the host sees it: the thread, the runs posted to it, the sessions
// pinned to it, and what the worker reports through shared memory (which runs began, and its
// heartbeat). `stalled()` is the scheduler's question: is this thread inside one long synchronous
// stretch, so that a run sent to it now would wait for somebody else's CPU loop?

import type { SnapshotRejection } from "../../../core/errors.ts";
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import type { WasmModuleSource } from "../../../core/types.ts";
import { EngineStartError } from "../../../core/errors.ts";
import {
  CREDIT_OFFSET,
  DOORBELL_OFFSET,
  HOLDER_OFFSET,
  TURN_TOTAL_OFFSET,
  HEARTBEAT_MS,
  HEARTBEAT_OFFSET,
  IDLE_STATE_OFFSET,
  NICE_OFFSET,
  parseWorkerMessage,
  PROGRESS_BYTES,
  PROGRESS_RING,
  TID_OFFSET,
  type HostMessage,
  type WorkerMessage,
} from "./protocol.ts";
import { DEMOTED, LIFTED, setThreadNice, STUCK, threadNice } from "./priority.ts";

/**
 * A worker whose heartbeat is this much older counts as held by a long synchronous stretch — on Linux
 * only once the thread has also burned this much CPU since its heartbeat went stale: a thread the OS
 * preempted (a loaded machine) is late but not spinning, and growing threads for it only adds load.
 */
export const STALL_MS = 5 * HEARTBEAT_MS;

/**
 * A reading of a thread's CPU time is reused for this long: the scheduler asks about every worker on
 * every placement, and one file read per worker per call cost the host's thread more than it saved.
 */
const CPU_READ_REUSE_MS = HEARTBEAT_MS;

/** CPU nanoseconds the thread has run, from /proc/self/task/TID/schedstat; undefined where unreadable. */
function threadCpuNs(tid: number): number | undefined {
  if (!(tid > 0)) return undefined;
  try {
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "latin1").split(" ", 1)[0]);
    return Number.isFinite(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The worker's native stack, as big as the main thread's (V8's ~1 MB default): the QuickJS engine's
 * stack clamp and its handling of C recursion that outruns the host stack were measured against it, so
 * a run behaves the same in a worker as in-process (a worker's default is 4 MB).
 */
const HOST_STACK_MB = 1;
/**
 * How long an idle worker sleeps on its doorbell after a run before it returns to its event loop
 * (protocol.ts, DOORBELL_OFFSET). A caller that runs back to back sends its next run well within it,
 * and waking a thread from a futex costs less than waking an event loop back in epoll
 * (docs/benchmarks.md). Short, because while the thread sleeps its own timers and promise tasks (a
 * spare module instantiating) wait; messages never do.
 */
export const LINGER_MS = 2;
/** How long a worker may take to start (load the engine, instantiate QuickJS) before it counts as failed. */
const START_TIMEOUT_MS = 30_000;

function workerEntry(): string {
  // The entry sits next to this module with the same extension (.ts from source, .js when built).
  const self = fileURLToPath(import.meta.url);
  return fileURLToPath(new URL(`./worker${self.slice(self.lastIndexOf("."))}`, import.meta.url));
}

/**
 * The host's Node flags minus those about the main entry (`--input-type`, `-e`/`-p` and their
 * argument): a worker started from a file refuses them, and a host run as `node --input-type=module -e`
 * must still get its workers. Undefined (inherit, Node's own handling) when there is nothing to drop:
 * an explicit list is validated more strictly than the inherited one.
 */
function workerExecArgv(): string[] | undefined {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith("--input-type=")) continue;
    if (["--input-type", "-e", "--eval", "-p", "--print"].includes(a)) {
      i++;
      continue;
    }
    out.push(a);
  }
  return out.length === args.length ? undefined : out;
}

function execArgvOption(): { execArgv?: string[] } {
  const execArgv = workerExecArgv();
  return execArgv ? { execArgv } : {};
}

/** What a worker holds of a session pinned to it (session.ts's ThreadSession is one). */
export interface PinnedSession {
  /** The worker answered `session-open`. */
  opened(error: string | undefined, rejected?: SnapshotRejection): void;
  /** The worker is gone: the session's state with it. */
  lose(why: string): void;
  /** The worker answered `session-save` (session.ts). */
  saved?(answer: { state?: Uint8Array; error?: string; unsupported?: boolean }): void;
}

/** What the handle reads of a run posted to it. */
export interface PostedRun {
  readonly id: number;
  /** Its sequence number on this worker. */
  readonly seq: number;
  /** Waiting for an event, taking no turn of the thread. */
  readonly parked: boolean;
}

/**
 * One worker thread. `J` is what the engine posts to it (job.ts's Job); the handle only reads each
 * one's sequence number, so it names nothing of the engine above it.
 */
export class WorkerHandle<J extends PostedRun = PostedRun> {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  readonly jobs = new Map<number, J>();
  readonly sessions = new Map<number, PinnedSession>();
  dead = false;
  readonly #progress = new SharedArrayBuffer(PROGRESS_BYTES);
  readonly #begunSeq = new Int32Array(this.#progress, 0, 1);
  readonly #begunAt = new Float64Array(this.#progress, 8, PROGRESS_RING);
  readonly #heartbeat = new Float64Array(this.#progress, HEARTBEAT_OFFSET, 1);
  readonly #tid = new Int32Array(this.#progress, TID_OFFSET, 1);
  readonly #nice = new Int32Array(this.#progress, NICE_OFFSET, 1);
  readonly #doorbell = new Int32Array(this.#progress, DOORBELL_OFFSET, 1);
  readonly #idleState = new Int32Array(this.#progress, IDLE_STATE_OFFSET, 1);
  readonly #holder = new Int32Array(this.#progress, HOLDER_OFFSET, 1);
  readonly #credit = new Float64Array(this.#progress, CREDIT_OFFSET, PROGRESS_RING);
  readonly #turnTotal = new Float64Array(this.#progress, TURN_TOTAL_OFFSET, 1);
  /** The thread's priority when it started, read by the host before any run (what `lift` restores). */
  #baseNice: number | undefined;
  #cpuNs: number | undefined;
  #cpuReadAt = -Infinity;
  /** The stale heartbeat last looked at, and the thread's CPU time then. */
  #staleBeat = 0;
  #staleCpuNs: number | undefined;
  #posted = 0;
  /** Its loss was told on the event channel (the exit and error handlers may both report it). */
  reported = false;
  /** An overflow worker (beyond `javascript.workers`): it retires after idling. */
  overflow = false;
  /** When an overflow worker last became idle, so the pool retires it after OVERFLOW_IDLE_MS. */
  idleTimer: NodeJS.Timeout | undefined;
  /** It answered `ready` once: only such a worker is replaced when it is lost (no restart loop). */
  started = false;
  #referenced = true;

  constructor(
    wasmModule: WasmModuleSource | undefined,
    onMessage: (handle: WorkerHandle<J>, m: WorkerMessage) => void,
    onExit: (handle: WorkerHandle<J>, why: string) => void,
    lingerMs = LINGER_MS,
  ) {
    this.worker = new Worker(workerEntry(), {
      workerData: { progress: this.#progress, wasmModule, lingerMs },
      ...execArgvOption(),
      resourceLimits: { stackSizeMb: HOST_STACK_MB },
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new EngineStartError("a QuickJS worker thread did not start in time")),
        START_TIMEOUT_MS,
      );
      const fail = (why: string) => {
        clearTimeout(timer);
        reject(new EngineStartError(`a QuickJS worker thread failed to start: ${why}`));
      };
      this.worker.on("message", (data: unknown) => {
        const m = parseWorkerMessage(data);
        if (!m) {
          onExit(this, "it sent a malformed message");
          return;
        }
        if (m.t === "ready") {
          clearTimeout(timer);
          this.#baseNice = threadNice(Atomics.load(this.#tid, 0));
          this.started = true;
          this.updateRef();
          resolve();
          return;
        }
        onMessage(this, m);
      });
      this.worker.on("error", (error) => {
        fail(String(error));
        onExit(this, `it threw ${String(error)}`);
      });
      this.worker.on("exit", (code) => {
        fail(`it exited with code ${code}`);
        onExit(this, `it exited with code ${code}`);
      });
    });
    this.ready.catch(() => undefined);
  }

  /** The worker's own word on what it is doing between runs (protocol.ts: TIDYING, IDLE, LINGERING). */
  get idleState(): number {
    return Atomics.load(this.#idleState, 0);
  }

  /** Runs posted and not answered by the worker, including session runs. */
  get load(): number {
    return this.jobs.size;
  }

  /** Runs posted and not answered that are not parked (waiting for an event, taking no turn). */
  get running(): number {
    return this.jobs.size - this.#parked;
  }

  /** Of `jobs`, how many are parked: kept by `parked()` and `forget()`, read on every placement. */
  #parked = 0;

  /** A run posted here parks (true) or wakes (false): call before the job's own flag is flipped. */
  parked(job: J, parked: boolean): void {
    if (this.jobs.get(job.id) !== job || job.parked === parked) return;
    this.#parked += parked ? 1 : -1;
  }

  /** Posts a run; returns its sequence number on this worker. */
  postRun(m: HostMessage): number {
    this.post(m);
    return ++this.#posted;
  }

  /** When the worker began run `seq` (epoch ms), or undefined if it has not begun it. */
  begunAt(seq: number): number | undefined {
    if (seq === 0 || Atomics.load(this.#begunSeq, 0) < seq) return undefined;
    return this.#begunAt[seq % PROGRESS_RING];
  }

  /** The sequence number of the run whose guest code holds the thread now, 0 if none (its own word). */
  holder(): number {
    return Atomics.load(this.#holder, 0);
  }

  /**
   * Milliseconds run `seq`'s thread spent on other runs' guest code since it began (its own word,
   * clamped to what can be true: never negative, never more than it has been running).
   */
  creditMs(seq: number, now: number): number {
    const begun = this.begunAt(seq);
    if (begun === undefined) return 0;
    const credit = (this.#turnTotal[0] ?? 0) - (this.#credit[seq % PROGRESS_RING] ?? 0);
    return Number.isFinite(credit) ? Math.min(Math.max(0, credit), Math.max(0, now - begun)) : 0;
  }

  /**
   * Inside one long synchronous stretch: a run it began is unanswered and its heartbeat is more than
   * STALL_MS old. Session runs count too (a session's CPU loop holds the thread like any other).
   */
  stalled(now: number): boolean {
    if (this.dead || !this.started || this.jobs.size === 0) return false;
    const beat = this.#heartbeat[0] ?? 0;
    if (now - beat <= STALL_MS) return false;
    let begun = false;
    for (const job of this.jobs.values()) if (this.begunAt(job.seq) !== undefined) begun = true;
    if (!begun) return false;
    // A thread that lowered its priority is inside a CPU-bound stretch by its own account, and at nice 19
    // on a busy machine it burns its CPU slowly: its CPU time would not tell the stall in time.
    if (Atomics.load(this.#nice, 0) === DEMOTED) return true;
    const cpu = this.cpuNs();
    if (cpu === undefined) return true;
    if (this.#staleBeat !== beat) {
      this.#staleBeat = beat;
      this.#staleCpuNs = cpu;
      return false;
    }
    return cpu - (this.#staleCpuNs ?? cpu) >= STALL_MS * 1e6;
  }

  /**
   * CPU nanoseconds the thread has run (a reading at most CPU_READ_REUSE_MS old), undefined off Linux.
   * The tid is the worker's word: at worst a wrong one reads another thread of this process.
   */
  cpuNs(fresh = false): number | undefined {
    const now = performance.now();
    if (fresh || now - this.#cpuReadAt > CPU_READ_REUSE_MS) {
      this.#cpuNs = threadCpuNs(Atomics.load(this.#tid, 0));
      this.#cpuReadAt = now;
    }
    return this.#cpuNs;
  }

  /**
   * At a run's deadline: puts a thread that lowered its priority back at its base, so the interrupt
   * that ends the run is reached at once (priority.ts). Only the host's own reading of the base is used.
   */
  lift(): void {
    if (this.#baseNice === undefined) return;
    if (Atomics.compareExchange(this.#nice, 0, DEMOTED, LIFTED) !== DEMOTED) return;
    // Refused (the tid is not a thread of ours): the worker restores itself when the stretch ends.
    setThreadNice(Atomics.load(this.#tid, 0), this.#baseNice);
  }

  /** The thread's priority could not be restored: it must not serve more runs. */
  get priorityStuck(): boolean {
    return Atomics.load(this.#nice, 0) === STUCK;
  }

  /** When the thread's event loop last turned (epoch ms, its own word: only ever used to wait longer). */
  lastBeat(): number {
    return this.#heartbeat[0] ?? 0;
  }

  /** Every message to the worker goes here: posted, then counted on the doorbell a lingering worker sleeps on. */
  post(m: HostMessage): void {
    this.worker.postMessage(m);
    Atomics.add(this.#doorbell, 0, 1);
    Atomics.notify(this.#doorbell, 0);
    this.updateRef();
  }

  /** Sessions asked for and not yet answered: the caller is awaiting them like a run. */
  opening = 0;

  /** An idle worker does not keep the host process alive; one with work (or a session opening) does. */
  updateRef(): void {
    const want = this.jobs.size > 0 || this.opening > 0;
    if (want === this.#referenced) return;
    this.#referenced = want;
    if (want) this.worker.ref();
    else this.worker.unref();
  }

  forget(id: number): J | undefined {
    const job = this.jobs.get(id);
    if (job?.parked === true) this.#parked--;
    this.jobs.delete(id);
    this.updateRef();
    return job;
  }

  terminate(): void {
    this.dead = true;
    // terminate() settles once the thread is gone; the handle is already dead, so there is nothing to
    // wait for or report (the exit handler does the bookkeeping).
    this.worker.terminate().catch(() => undefined);
  }
}
