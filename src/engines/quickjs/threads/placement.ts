// Where a waiting run goes: a pure function of the workers' state, so the rule can be read and tested
// alone (piscina keeps its balancer the same way). The engine carries out the decision: posting,
// growing an overflow worker, or leaving the run to wait on the host.

import { LINGERING, TIDYING } from "./protocol.ts";

/** What placement needs to know of one worker. */
export interface Candidate {
  readonly dead: boolean;
  /** It has answered `ready`. */
  readonly started: boolean;
  /** Its thread's priority could not be put back: it finishes what it holds, then retires. */
  readonly priorityStuck: boolean;
  /** Runs posted to it and not answered. */
  readonly load: number;
  /**
   * Of those, the ones not parked (parked runs wait for an event and take no turn of the thread):
   * what `runsPerWorker` bounds. Undefined: all of them.
   */
  readonly running?: number;
  /** Held by one long synchronous stretch (a CPU-bound guest) at `now`. */
  stalled(now: number): boolean;
  /**
   * What it is doing between runs, by its own word (protocol.ts): TIDYING, IDLE or LINGERING. Only
   * ever a tie-break between workers with the same load, so a worker that lies about it gets runs in a
   * different order, nothing more.
   */
  readonly idleState: number;
}

/**
 * Among equally loaded workers: one still awake after its last run (no wake-up at all), then one asleep
 * on its doorbell (a futex wake), then one back in its event loop (epoll and the port); a state word it
 * does not know counts as the last.
 */
function readiness(state: number): number {
  return state === TIDYING ? 2 : state === LINGERING ? 1 : 0;
}

const running = (w: Candidate): number => w.running ?? w.load;

/**
 * Fewer running runs first; then fewer runs in all (parked runs spread evenly, so a CPU loop that
 * lands on a thread holds up as few of them as can be); then readiness.
 */
function before(w: Candidate, best: Candidate): boolean {
  if (running(w) !== running(best)) return running(w) < running(best);
  if (w.load !== best.load) return w.load < best.load;
  return readiness(w.idleState) > readiness(best.idleState);
}

export type Placement<W> = { post: W } | "grow" | "wait";

/**
 * The least-loaded started worker with room (fewer running runs than `runsPerWorker`) that is not stalled; else, when some worker is stalled and
 * none is still starting, a new overflow worker; else the run waits on the host. Ties go to the worker
 * readiest for it (`readiness`), then to the first (the base workers, in order, before the overflow):
 * on this 2-core machine waking a sleeping thread cost a back-to-back caller more than waiting for the
 * thread that just answered to finish its after-run work (freeing its context, building the next),
 * and a thread asleep on its doorbell wakes faster than one back in its event loop (docs/benchmarks.md).
 */
export function place<W extends Candidate>(
  workers: readonly W[],
  opts: { now: number; runsPerWorker: number; closed: boolean },
): Placement<W> {
  let best: W | undefined;
  let stalled = false;
  let starting = false;
  for (const w of workers) {
    if (w.dead) continue;
    if (!w.started) {
      starting = true;
      continue;
    }
    if (w.stalled(opts.now)) {
      stalled = true;
      continue;
    }
    if (w.priorityStuck) continue;
    if (running(w) >= opts.runsPerWorker) continue;
    if (!best || before(w, best)) best = w;
  }
  if (best) return { post: best };
  return stalled && !starting && !opts.closed ? "grow" : "wait";
}
