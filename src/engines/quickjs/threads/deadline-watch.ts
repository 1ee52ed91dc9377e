// The deadline watch over a run on a worker thread, as a pure verdict: given what the host can see (when
// the worker began the run, its heartbeat, its thread's CPU time), what to do now. The engine acts on
// it (lift the thread's priority, sleep, terminate the worker). Every wait it uses is in GRACE
// (src/kit/deadline.ts), with the reason beside it.

import { GRACE, type Deadline } from "../../../kit/deadline.ts";

export interface WatchState {
  /** Now, on the epoch clock the worker's stamps use. */
  readonly now: number;
  /**
   * The run's deadline, from when the worker began it, on the epoch clock (undefined: still queued in
   * the worker, its budget not begun).
   */
  readonly deadline: Deadline | undefined;
  /** The run's budget: how long a run still queued is left before it is looked at again. */
  readonly timeoutMs: number;
  /**
   * Another run's guest code holds the thread now (the worker's word): this run is queued behind it,
   * not stuck, and is never the one blamed or killed for it; the holder's own watch deals with it.
   */
  readonly heldByOther: boolean;
  /** The worker's last heartbeat. */
  readonly lastBeat: number;
  /** The thread's CPU time now and when the deadline was first seen passed (ns; undefined off Linux). */
  readonly cpuNs: number | undefined;
  readonly cpuAtDeadline: number | undefined;
  /** How often a stalled thread's heartbeat is looked at again. */
  readonly beatMs: number;
}

export type Verdict =
  /** Look again after `ms` (not begun yet, or before the deadline). */
  | { readonly sleep: number; readonly lift?: false }
  /** Past the deadline: put the thread's priority back so its interrupt is reached, look again after `ms`. */
  | { readonly sleep: number; readonly lift: true }
  /** Past the deadline and the grace with no answer, not starved: terminate the worker. */
  | "kill";

export function verdict(s: WatchState): Verdict {
  if (s.deadline === undefined) return { sleep: s.timeoutMs };
  const deadline = s.deadline.at;
  if (!s.deadline.passed(0, s.now)) return { sleep: deadline - s.now + 1 };
  const left = deadline + GRACE.threadKillMs - s.now;
  if (left > 0) return { sleep: left + 1, lift: true };
  if (s.heldByOther) return { sleep: s.beatMs };
  // A thread whose event loop turned after the run's deadline is not held by that run's guest code: on
  // a starved machine its answer may be in the port's queue, or its engine's own deadline about to end
  // the run. It gets one more grace, not more.
  if (s.lastBeat > deadline && left > -GRACE.threadKillMs) return { sleep: s.beatMs, lift: true };
  if (starved(s, s.now - deadline)) return { sleep: s.beatMs, lift: true };
  return "kill";
}

/**
 * The thread ran less than half the grace since the deadline (by its CPU time, Linux): the machine did
 * not give it the CPU to reach its interrupt, which a builtin that never polls would have burned. Such
 * a thread waits, up to GRACE.threadStarvedMaxMs past the deadline. Off Linux nothing is starved.
 */
function starved(s: WatchState, pastDeadlineMs: number): boolean {
  if (pastDeadlineMs >= GRACE.threadStarvedMaxMs || s.cpuAtDeadline === undefined || s.cpuNs === undefined)
    return false;
  return s.cpuNs - s.cpuAtDeadline < (GRACE.threadKillMs / 2) * 1e6;
}
