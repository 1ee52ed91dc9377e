// CPU-bound runs give way: a worker thread whose guest has held it in one synchronous stretch for
// DEMOTE_AFTER_MS lowers its own scheduling priority to nice 19 until the stretch ends, so on a machine
// with fewer cores than spinning guests the kernel hands the CPU to the host's thread (which parses
// requests and sends results) and to short runs first, instead of an equal share to every loop.
//
// What this does and does not change:
// - A demoted run still gets all the CPU nobody else wants: alone on the machine it runs as fast.
// - It never extends a deadline. At a run's deadline the host puts its thread back at the base priority
//   (`lift`), so the interrupt that ends the run is reached at once rather than after the other threads'
//   turns; the kill grace is then measured as before. The worker puts itself back when the stretch ends.
// - Linux only: there `setpriority(PRIO_PROCESS, tid)` renices one thread. Elsewhere it is off.
// - Going back up needs CAP_SYS_NICE in the initial user namespace or `RLIMIT_NICE` ≥ 20 − base
//   (`ulimit -e`). Without either a demoted thread would stay demoted, so `"auto"` turns demotion on only
//   where a throwaway thread proved the round trip works (`mayRestorePriority`), and `true` without it is
//   an error. A thread that still cannot be restored says so (STUCK) and the pool retires it.
//
// The state word in shared memory (protocol.ts, NICE_OFFSET) is the worker's and the host's to swap:
// NORMAL → DEMOTED by the worker (then the syscall), DEMOTED → LIFTED by whichever side first sees the
// run end (the worker's interrupt, the host's deadline; then the syscall back), anything → NORMAL by the
// worker when its stretch ends. The worker re-reads the word after its own syscall, so a lift that
// raced its demotion is never undone.

import { statSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { Worker } from "node:worker_threads";
import { epochNow } from "../../../kit/deadline.ts";

/** How long one synchronous stretch of a run may last before its thread gives way. */
export const DEMOTE_AFTER_MS = 2;
/** The nice value a CPU-bound thread runs at (the kernel's lowest priority). */
export const DEMOTED_NICE = 19;

export const NORMAL = 0;
export const DEMOTED = 1;
/** The host restored the thread at a run's deadline; the worker does not demote it again this stretch. */
export const LIFTED = 2;
/** The worker could not restore its priority: the pool retires the thread. */
export const STUCK = 3;

/** `javascript.demoteCpuBound`, see src/options/index.ts. */
export type DemoteSetting = "auto" | boolean;

/**
 * Renices thread `tid` of this process. The id comes from a worker (a place guest code ran), so it is
 * checked to be a live thread of this process first: nothing here renices another process. Returns
 * false when the id is not one, or the kernel refused.
 */
export function setThreadNice(tid: number, nice: number): boolean {
  if (process.platform !== "linux" || !Number.isSafeInteger(tid) || tid <= 0) return false;
  try {
    statSync(`/proc/self/task/${tid}`);
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/** The nice value of thread `tid` of this process, or undefined when it is not one. */
export function threadNice(tid: number): number | undefined {
  if (process.platform !== "linux" || !Number.isSafeInteger(tid) || tid <= 0) return undefined;
  try {
    statSync(`/proc/self/task/${tid}`);
    return getPriority(tid);
  } catch {
    return undefined;
  }
}

// The probe: a throwaway thread lowers its own priority by one and tries to come back. It runs in its
// own thread because a failed attempt would leave the thread that tried it lowered for good.
const PROBE = `
const { readlinkSync } = require("node:fs");
const { getPriority, setPriority } = require("node:os");
const { parentPort } = require("node:worker_threads");
let ok = false;
try {
  const tid = Number(/\\/task\\/(\\d+)$/.exec(readlinkSync("/proc/thread-self"))[1]);
  const base = getPriority(tid);
  if (base < ${DEMOTED_NICE}) {
    setPriority(tid, ${DEMOTED_NICE});
    try { setPriority(tid, base); ok = getPriority(tid) === base; } catch {}
  }
} catch {}
parentPort.postMessage(ok);
`;

let probed: Promise<boolean> | undefined;

/**
 * Whether a thread of this process that lowered its priority can raise it back (once per process).
 * False off Linux, at nice 19 already, or without CAP_SYS_NICE / a nice limit that allows it.
 */
export function mayRestorePriority(): Promise<boolean> {
  if (process.platform !== "linux") return Promise.resolve(false);
  probed ??= new Promise<boolean>((resolve) => {
    let worker: Worker;
    try {
      // No inherited flags: under `--input-type=module` an eval'd worker would be ESM, without `require`.
      worker = new Worker(PROBE, { eval: true, execArgv: [] });
    } catch {
      resolve(false);
      return;
    }
    worker.once("message", (ok: unknown) => resolve(ok === true));
    worker.once("error", () => resolve(false));
    worker.once("exit", () => resolve(false));
  });
  return probed;
}

/**
 * Resolves the setting to whether the pool demotes: `"auto"` where restoring works, `true` only there
 * (else the error names what is missing), `false` never.
 */
export async function resolveDemotion(setting: DemoteSetting): Promise<boolean | string> {
  if (setting === false) return false;
  const ok = await mayRestorePriority();
  if (ok || setting === "auto") return ok;
  return process.platform !== "linux"
    ? "true needs Linux, where one thread's priority can be changed on its own"
    : "true needs the process to be able to restore a lowered thread priority: CAP_SYS_NICE, or a nice limit of 20 (`ulimit -e 20`, `prlimit --nice=20`, Docker `--ulimit nice=20`)";
}

/** This thread's CPU time in microseconds (Node 23.9+), or undefined where the runtime has no such clock. */
const cpuClock: (() => number) | undefined = (() => {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  if (typeof usage !== "function") return undefined;
  return () => {
    const u = usage.call(process);
    return u.user + u.system;
  };
})();
/** How often, at most, a long stretch reads its thread's CPU clock (a syscall). */
const CPU_READ_MS = 0.25;

/**
 * The worker's side: lowers this thread's priority once the current synchronous stretch has lasted
 * DEMOTE_AFTER_MS (`poll`, from the engine's interrupt handler), puts it back when the stretch ends
 * (`stretchEnded`, whenever the event loop turns).
 */
export class Demoter {
  readonly #state: Int32Array;
  readonly #tid: number;
  readonly #base: number;
  readonly #stretchStart: () => number;
  /** Runs that asked for demotion are open on this thread. */
  armed = 0;

  constructor(state: Int32Array, tid: number, stretchStart: () => number) {
    this.#state = state;
    this.#tid = tid;
    this.#base = threadNice(tid) ?? DEMOTED_NICE;
    this.#stretchStart = stretchStart;
  }

  /**
   * Called on every interrupt poll while guest code runs: cheap unless it is time to give way. A poll
   * that interrupts the run (its deadline, an abort, the memory cap) puts the thread back at once, so
   * the run's end (unwinding, its result, its runtime freed) is not done at the lowest priority; the
   * host's lift at the deadline is the backstop for a thread that does not get to poll.
   */
  poll(stopping: boolean): void {
    if (stopping) {
      if (Atomics.compareExchange(this.#state, 0, DEMOTED, LIFTED) === DEMOTED) this.#restore();
      return;
    }
    if (this.armed === 0 || this.#base >= DEMOTED_NICE) return;
    const start = this.#stretchStart();
    const now = epochNow();
    if (now - start < DEMOTE_AFTER_MS) return;
    if (!this.#burnt(start, now)) return;
    if (Atomics.compareExchange(this.#state, 0, NORMAL, DEMOTED) !== NORMAL) return;
    setThreadNice(this.#tid, DEMOTED_NICE);
    // The host lifted the thread between the swap and the syscall: its restore may have come first.
    if (Atomics.load(this.#state, 0) === LIFTED) this.#restore();
  }

  /**
   * Whether the stretch that began at `start` has burnt DEMOTE_AFTER_MS of this thread's own CPU since
   * it passed DEMOTE_AFTER_MS of wall time (`process.threadCpuUsage`; without it, wall time alone). On a
   * loaded machine the OS preempts a short stretch past 2 ms of wall time; demoting it would cost two
   * syscalls for nothing, and the host would take a demoted thread for a stalled one and move runs
   * away from it and grow threads (measured: 1,000 runs awaiting a host function under load 20 on 2
   * cores cost 6.4 s of CPU with 6 threads grown, against 3.6 s without demotion). A CPU loop is
   * demoted 2 ms of its own CPU later than before. The clock is read at most every CPU_READ_MS.
   */
  #burnt(start: number, now: number): boolean {
    if (!cpuClock) return true;
    if (this.#stretch !== start) {
      this.#stretch = start;
      this.#cpuAt = cpuClock();
      this.#readAt = now;
      return false;
    }
    if (now - this.#readAt < CPU_READ_MS) return false;
    this.#readAt = now;
    return cpuClock() - this.#cpuAt >= DEMOTE_AFTER_MS * 1_000;
  }

  #stretch = 0;
  #cpuAt = 0;
  #readAt = 0;

  /** The event loop turned: this thread is not inside a CPU-bound stretch any more. */
  stretchEnded(): void {
    const was = Atomics.load(this.#state, 0);
    if (was === NORMAL || was === STUCK) return;
    Atomics.store(this.#state, 0, NORMAL);
    this.#restore();
  }

  #restore(): void {
    if (setThreadNice(this.#tid, this.#base) && threadNice(this.#tid) === this.#base) return;
    Atomics.store(this.#state, 0, STUCK);
  }
}
