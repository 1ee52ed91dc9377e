// Bounded admission: at most `capacity` holders at once, at most `maxQueue` callers waiting in FIFO
// order behind them, and past that a `QueueFullError` at once. This is what keeps 10,000 runs submitted
// together from becoming 10,000 runtimes (or 10,000 parked promises with their requests): the excess is
// refused, the rest wait their turn. A waiter whose signal aborts leaves the queue.

import { ClosedError, QueueFullError } from "../core/errors.ts";
import { traceAdmission } from "../kit/trace.ts";

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** Thrown by `acquire` when the caller's signal aborted while it waited (or before). */
export class GateAbortedError extends Error {
  override name = "AbortError";
}

export interface GateOptions {
  /** The error for a caller the full queue refuses (default: a QueueFullError naming the gate). */
  full?: () => QueueFullError;
}

export class Gate {
  readonly #name: string;
  readonly #capacity: number;
  readonly #maxQueue: number;
  readonly #full: (() => QueueFullError) | undefined;
  readonly #waiters: Waiter[] = [];
  #held = 0;
  #closed = false;

  constructor(name: string, capacity: number, maxQueue: number, options: GateOptions = {}) {
    this.#name = name;
    this.#capacity = capacity;
    this.#maxQueue = maxQueue;
    this.#full = options.full;
  }

  get stats(): { held: number; waiting: number } {
    return { held: this.#held, waiting: this.#waiters.length };
  }

  /** True when a slot was taken at once; a caller can then skip the promise. */
  tryAcquire(): boolean {
    if (this.#closed || this.#held >= this.#capacity || this.#waiters.length > 0) return false;
    this.#held++;
    return true;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new ClosedError(this.#name));
    if (signal?.aborted) return Promise.reject(new GateAbortedError("aborted while waiting"));
    if (this.tryAcquire()) return Promise.resolve();
    if (this.#waiters.length >= this.#maxQueue)
      return Promise.reject(this.#full?.() ?? new QueueFullError(this.#name, this.#maxQueue));
    const waited = new Promise<void>((resolve, reject) => {
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
    const waiting = traceAdmission(Math.max(0, this.#waiters.length - 1));
    waited.then(
      () => waiting.end(),
      (error: unknown) => waiting.end(error),
    );
    return waited;
  }

  /** Gives a slot back: the first waiter takes it over. */
  release(): void {
    const next = this.#waiters.shift();
    if (next) {
      if (next.onAbort) next.signal?.removeEventListener("abort", next.onAbort);
      next.resolve();
      return;
    }
    if (this.#held > 0) this.#held--;
  }

  /** Refuses new callers and fails every waiter; holders keep their slots until they release. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) {
      if (w.onAbort) w.signal?.removeEventListener("abort", w.onAbort);
      w.reject(new ClosedError(this.#name));
    }
  }
}
