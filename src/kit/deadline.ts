// A run's deadline, written once. `limits.timeoutMs` becomes a point in time on one clock (this
// thread's or process's `performance.now()`), and every rung that enforces it reads the same object:
// the guest's cooperative interrupt, the host's watch over a worker thread, the network gate, the jail's
// kill timer. Each rung that must act *after* the deadline (because the rung above it had the first
// chance) adds a grace from GRACE, where the reason for each value is written down.
//
// quickjs-emscripten's `shouldInterruptAfterDeadline(deadline)` is the same idea given a factory; here
// it is an object so the network gate and the kill timer can ask how much time is left.

/**
 * How long each rung waits past the deadline before it acts, and why. One table, so two different
 * waits can never again share one name.
 */
export const GRACE = Object.freeze({
  /**
   * A worker thread past its deadline: the guest's own interrupt fires at the deadline and normally
   * ends the run within microseconds; a C builtin that does not poll the interrupt (a huge sort, a
   * regex) is what the host's kill is for. 250 ms is long enough that a busy but cooperative thread is
   * not killed (a kill costs a thread and its warm modules), short enough to bound a stuck one.
   */
  threadKillMs: 250,
  /**
   * A thread the OS starved of CPU (other processes on the machine) past its deadline has not had the
   * chance to reach its interrupt: it gets up to this long before the kill, while its CPU time moves.
   */
  threadStarvedMaxMs: 2_000,
  /**
   * A Pyodide sidecar past its deadline: the in-sidecar interrupt (SIGINT into the interpreter, every
   * 50 ms) ends most runs; Python code inside a long C call only returns after it. The jail kills the
   * process at deadline + 1 s: a killed sidecar costs a fresh process (hundreds of ms), so the interrupt
   * gets a real chance first.
   */
  sidecarKillMs: 1_000,
  /**
   * The network gate past the run's deadline: requests still open are aborted this long after the
   * deadline, so the engine's own timeout (which settles the run) is seen first and a request never
   * outlives its run by more than this.
   */
  networkMs: 250,
  /**
   * The native tier's in-jail alarm fires this much *before* the deadline (at most this share of the
   * budget), so Python can raise and report its own timeout before the jail's hard kill at the deadline.
   */
  nativeSoftEarlyMs: 150,
  nativeSoftEarlyShare: 0.2,
});

/** The clock every deadline is on: this thread's monotonic milliseconds. */
export function now(): number {
  return performance.now();
}

/**
 * Milliseconds since the epoch at `performance.now()` precision: the clock one thread's stamps are
 * written on for another to read (a worker's heartbeat and begin marks, the host's watch over them),
 * since each thread's `performance.now()` counts from its own start.
 */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

export class Deadline {
  /** The budget it was made from (`limits.timeoutMs`), for messages. */
  readonly timeoutMs: number;
  /** When the budget began, on this thread's clock. */
  readonly begunAt: number;
  /** The point in time the run must be done by. */
  readonly at: number;

  constructor(timeoutMs: number, begunAt: number = now()) {
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new RangeError(`timeoutMs must be ≥ 0, got ${timeoutMs}`);
    this.timeoutMs = timeoutMs;
    this.begunAt = begunAt;
    this.at = begunAt + timeoutMs;
  }

  /** Milliseconds left (never negative). */
  left(at: number = now()): number {
    return Math.max(0, this.at - at);
  }

  /** True once the deadline (plus `graceMs`) has passed. */
  passed(graceMs = 0, at: number = now()): boolean {
    return at >= this.at + graceMs;
  }

  /**
   * `earlyMs` before the deadline, as a time on the wall clock (`Date.now()`): for a rung in another
   * process, which cannot read this thread's monotonic clock (the native tier's in-jail alarm).
   */
  wallClockAt(earlyMs = 0, at: number = now()): number {
    return Date.now() + (this.at - earlyMs - at);
  }

  /** A predicate for a poll loop: true once the deadline has passed (the guest's interrupt). */
  interrupter(): () => boolean {
    const at = this.at;
    return () => now() >= at;
  }
}
