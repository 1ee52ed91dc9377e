// Admission that counts running and parked runs apart. A run that computes needs a thread's turn; a run
// that waits (on a host function, a timer, a fetch) needs only the memory its state sits in. So there are
// two bounds: `running` runs computing at once (the threads' slots, enforced where runs are placed on
// threads) and `parked` runs waiting beside them (memory). The gate admits up to `running + parked` runs;
// an admitted run that finds no thread with a free slot waits for one, its deadline not started. Behind
// them at most `maxQueue` callers wait in FIFO order, then a `QueueFullError` that names the bound that
// held them: the parked one when every parked place is taken, else the running one.

import { ClosedError, QueueFullError } from "../core/errors.ts";
import { GateAbortedError } from "./gate.ts";

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export interface ParkingBounds {
  /** Runs computing at once. */
  running: number;
  /** Runs parked at once, beside the running ones. */
  parked: number;
  /** Callers waiting to be admitted. */
  maxQueue: number;
}

export class ParkingGate {
  readonly #name: string;
  readonly #bounds: ParkingBounds;
  readonly #waiters: Waiter[] = [];
  /** Admitted runs not yet ended (running, parked, or waiting for a thread). */
  #held = 0;
  #parked = 0;
  #closed = false;

  constructor(name: string, bounds: ParkingBounds) {
    this.#name = name;
    this.#bounds = bounds;
  }

  /** Admitted runs not parked (running or waiting for a thread), parked ones, callers not yet admitted. */
  get stats(): { running: number; parked: number; waiting: number } {
    return { running: this.#held - this.#parked, parked: this.#parked, waiting: this.#waiters.length };
  }

  /** True when the run was admitted at once; a caller can then skip the promise. */
  tryAcquire(): boolean {
    if (this.#closed || this.#held >= this.#bounds.running + this.#bounds.parked || this.#waiters.length > 0)
      return false;
    this.#held++;
    return true;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new ClosedError(this.#name));
    if (signal?.aborted) return Promise.reject(new GateAbortedError("aborted while waiting"));
    if (this.tryAcquire()) return Promise.resolve();
    if (this.#waiters.length >= this.#bounds.maxQueue) return Promise.reject(this.#full());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(new GateAbortedError("aborted while waiting"));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
    });
  }

  /** Which bound holds the queue: the parked one when every parked place is taken, else the running one. */
  #full(): QueueFullError {
    const running = this.#held - this.#parked;
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
    const next = this.#waiters.shift();
    if (next) {
      if (next.onAbort) next.signal?.removeEventListener("abort", next.onAbort);
      next.resolve();
      return;
    }
    if (this.#held > 0) this.#held--;
  }

  /** Refuses new callers and fails every waiter; holders keep their places until they release. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) {
      if (w.onAbort) w.signal?.removeEventListener("abort", w.onAbort);
      w.reject(new ClosedError(this.#name));
    }
  }
}
