// Whose guest code this thread is running, and for how long each run has had to wait for the others.
//
// Several runs share one thread (a worker takes up to `javascript.runsPerWorker`, the in-process engine
// runs them all on the caller's thread), and they take turns: while one run's guest code executes —
// a `while (true) {}` until its own deadline — the others cannot even read the answer to the host call
// they await. Charging that time to them would end innocent runs for another run's loop. So a run's
// deadline does not count the time its thread spent inside *other* runs' turns (its credit): every run
// still ends at its own deadline measured on its own time, the spinner at exactly its own.
//
// Per thread (module state): the thread pool's worker and the in-process engine each run on one thread.
// The worker also listens (`setTurnHook`) to tell the host which run holds the thread and each run's
// credit, so the host's watch blames the run that holds the thread and never the ones queued behind it.

let total = 0;
let depth = 0;
/**
 * `open`: a run began (its clock starts); `enter`/`leave`: its guest code takes / gives back the thread;
 * `park`/`unpark`: it waits for an event (a host call's answer, a timer, a fetch) with nothing to do
 * until then, and stops waiting (the thread pool counts a parked run apart from running ones).
 */
export type TurnEvent = "open" | "enter" | "leave" | "park" | "unpark";
let hook: ((event: TurnEvent, clock: TurnClock) => void) | undefined;

/** Sets (or clears) this thread's turn hook (the thread pool's worker). Host code: sees no guest value. */
export function setTurnHook(fn: ((event: TurnEvent, clock: TurnClock) => void) | undefined): void {
  hook = fn;
}

/** Milliseconds this thread has spent in turns so far (every run's). */
export function turnTotal(): number {
  return total;
}

/** One run's share of its thread. */
export class TurnClock {
  /** Who the run is to the hook: its request's `limits` object (unique per run, kept by every wrapper). */
  readonly tag: object;
  readonly #base = total;
  #own = 0;
  #enteredAt = 0;

  constructor(tag: object) {
    this.tag = tag;
    hook?.("open", this);
  }

  /** Milliseconds this thread spent in other runs' turns since this run began. */
  get creditMs(): number {
    return total - this.spentMark;
  }

  /**
   * The thread's turn total when this run began plus this run's own turns: its credit is the total now
   * less this, so whoever knows the total (the host, from shared memory) can tell the credit of every
   * run without being told each time another run's turn ends.
   */
  get spentMark(): number {
    return this.#base + this.#own;
  }

  /** The run waits for an event with nothing else to do (`parked`), or stops waiting. */
  park(parked: boolean): void {
    hook?.(parked ? "park" : "unpark", this);
  }

  /** Runs `step` (one entry into WASM that may run this run's guest code) as this run's turn. */
  turn(step: () => void): void {
    if (depth++ > 0) {
      try {
        step();
      } finally {
        depth--;
      }
      return;
    }
    this.#enteredAt = performance.now();
    hook?.("enter", this);
    try {
      step();
    } finally {
      depth--;
      const spent = performance.now() - this.#enteredAt;
      total += spent;
      this.#own += spent;
      hook?.("leave", this);
    }
  }
}
