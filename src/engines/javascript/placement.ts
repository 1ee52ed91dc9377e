// Where a waiting run goes: a pure function of the workers' state, so the rule can be read and tested
// alone (piscina keeps its balancer the same way). The engine carries out the decision: posting,
// growing an overflow worker, or leaving the run to wait on the host.

/** What placement needs to know of one worker. */
export interface Candidate {
  readonly dead: boolean;
  /** It has answered `ready`. */
  readonly started: boolean;
  /** Its thread's priority could not be put back: it finishes what it holds, then retires. */
  readonly priorityStuck: boolean;
  /** Runs posted to it and not answered. */
  readonly load: number;
  /** Held by one long synchronous stretch (a CPU-bound guest) at `now`. */
  stalled(now: number): boolean;
}

export type Placement<W> = { post: W } | "grow" | "wait";

/**
 * The least-loaded started worker with room that is not stalled (ties go to the first, so the base
 * workers, in order, before the overflow); else, when some worker is stalled and none is still
 * starting, a new overflow worker; else the run waits on the host. (Round-robin between idle workers,
 * so that one builds its next context while the other runs, measured slower: waking a different thread
 * on every call costs more than the context build it hides.)
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
    if (w.load < opts.runsPerWorker && (!best || w.load < best.load)) best = w;
  }
  if (best) return { post: best };
  return stalled && !starting && !opts.closed ? "grow" : "wait";
}
