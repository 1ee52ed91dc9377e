// Admission that counts running and parked runs apart. A run that computes needs a thread's turn; a run
// that waits (on a host function, a timer, a fetch) needs only the memory its state sits in. So there are
// two bounds: `running` runs computing at once (the threads' slots, enforced where runs are placed on
// threads) and `parked` runs waiting beside them (memory). The gate admits up to `running + parked` runs;
// an admitted run that finds no thread with a free slot waits for one, its deadline not started. Behind
// them at most `maxQueue` callers wait in FIFO order, then a `QueueFullError` that names the bound that
// held them: the parked one when every parked place is taken, else the running one.

import { QueueFullError } from "../core/errors.ts";
import { Gate } from "./gate.ts";

export interface ParkingBounds {
  /** Runs computing at once. */
  running: number;
  /** Runs parked at once, beside the running ones. */
  parked: number;
  /** Callers waiting to be admitted. */
  maxQueue: number;
}

/** A Gate of `running + parked` places that also counts which admitted runs are parked. */
export class ParkingGate {
  readonly #name: string;
  readonly #bounds: ParkingBounds;
  /** Admitted runs not yet ended (running, parked, or waiting for a thread), and the queue behind them. */
  readonly #gate: Gate;
  #parked = 0;

  constructor(name: string, bounds: ParkingBounds) {
    this.#name = name;
    this.#bounds = bounds;
    this.#gate = new Gate(name, bounds.running + bounds.parked, bounds.maxQueue, { full: () => this.#full() });
  }

  /** Admitted runs not parked (running or waiting for a thread), parked ones, callers not yet admitted. */
  get stats(): { running: number; parked: number; waiting: number } {
    const { held, waiting } = this.#gate.stats;
    return { running: held - this.#parked, parked: this.#parked, waiting };
  }

  /** True when the run was admitted at once; a caller can then skip the promise. */
  tryAcquire(): boolean {
    return this.#gate.tryAcquire();
  }

  acquire(signal?: AbortSignal): Promise<void> {
    return this.#gate.acquire(signal);
  }

  /** Which bound holds the queue: the parked one when every parked place is taken, else the running one. */
  #full(): QueueFullError {
    const running = this.#gate.stats.held - this.#parked;
    const bound =
      this.#parked >= this.#bounds.parked
        ? `every parked place is taken (javascript.maxParked, ${this.#bounds.parked}; ${running} more admitted runs are running or waiting for a thread)`
        : `the running bound is reached (${running} admitted runs are running or waiting for a thread, ${this.#bounds.running} run at once; ${this.#parked} more are parked)`;
    return new QueueFullError(`${this.#name}: ${bound}`, this.#bounds.maxQueue);
  }

  /** An admitted run parks (true) or wakes (false): counted apart, for the bound a refusal names. */
  park(parked: boolean): void {
    if (parked) this.#parked++;
    else if (this.#parked > 0) this.#parked--;
  }

  /** An admitted run ends: its place goes to the first waiter. */
  release(): void {
    this.#gate.release();
  }

  /** Refuses new callers and fails every waiter; holders keep their places until they release. */
  close(): void {
    this.#gate.close();
  }
}
