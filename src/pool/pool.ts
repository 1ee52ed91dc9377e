// A warm pool of expensive workers (sidecar processes): kept at `size`, refilled in the background
// when a member dies or retires, with a bounded FIFO queue of callers waiting for a member.
//
// - `acquire()` hands out an idle member at once, or queues (QueueFullError past `maxQueue`).
// - `release(member, reusable)` gives it back; a member that is not reusable is destroyed and
//   replaced, so only the caller whose run killed it ever notices.
// - Refill starts one member per missing slot, so a crash loop cannot fork-bomb the host; a failed
//   start is reported to every waiter (the same error would hit them all) and retried on the next
//   acquire.
// - While no member is up (a cold pool, or every member died), one starts alone and the others only
//   once it is ready: concurrent starts share the machine's cores, so starting them together makes
//   the first caller wait for all of them (a pool of 2 sidecars on 2 cores: ~1.7× a single start).
// - Members are never shared: a member is with exactly one caller between acquire and release.
// - `standby` members are started beside the `size` that serve: they take no runs, and one steps in the
//   moment a serving member is destroyed or detached, so capacity is back at once (a sidecar start is
//   most of a second) while a new standby starts in the background. Standbys start only once every
//   serving slot is up, so they never slow a start a caller waits for.

import { ClosedError, QueueFullError } from "../core/errors.ts";
import { traceAdmission } from "../kit/trace.ts";

export interface PoolOptions<T> {
  /** What the pool holds, for error messages (`"python pool"`). */
  name: string;
  size: number;
  /** Members started beyond `size` that serve nothing until one of `size` is lost. @defaultValue 0 */
  standby?: number;
  maxQueue: number;
  create(): Promise<T>;
  destroy(member: T): Promise<void>;
  /** False when a member died while idle (the pool drops it and refills). */
  isAlive(member: T): boolean;
}

interface Waiter<T> {
  resolve(member: T): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export class WarmPool<T> implements AsyncDisposable {
  readonly #o: PoolOptions<T>;
  readonly #idle: T[] = [];
  readonly #busy = new Set<T>();
  /** Started members beyond `size`, oldest first (see `standby`). */
  readonly #standby: T[] = [];
  #starting = 0;
  readonly #waiters: Waiter<T>[] = [];
  #closed = false;
  #lastError: unknown;
  readonly #startListeners = new Set<() => void>();

  constructor(options: PoolOptions<T>) {
    this.#o = options;
  }

  /**
   * Destroys a member that left the pool. Nobody waits on it and it is already out of the pool, so a
   * failure to destroy has no caller to tell; the member's own exit handling (a killed process) is
   * what frees it.
   */
  #destroy(member: T): void {
    this.#o.destroy(member).catch(() => undefined);
  }

  /** Members ready or in use, plus those starting. */
  get stats(): { idle: number; busy: number; starting: number; waiting: number } {
    return { idle: this.#idle.length, busy: this.#busy.size, starting: this.#starting, waiting: this.#waiters.length };
  }

  /** Standby members that are up (see `standby`; `starting` counts those still starting). */
  get standby(): number {
    return this.#standby.length;
  }

  /** Starts members until the pool is full; resolves when at least one is ready (or rejects). */
  async prewarm(): Promise<void> {
    this.#refill();
    if (this.#idle.length > 0) return;
    const member = await this.acquire();
    this.release(member, true);
  }

  /** Resolves when the pool is full again (every slot idle): used by benchmarks and tests. */
  async whenFull(): Promise<void> {
    while (!this.#closed && this.#idle.length < this.#o.size) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#startListeners.delete(done);
          resolve();
        };
        this.#startListeners.add(done);
      });
    }
  }

  acquire(signal?: AbortSignal): Promise<T> {
    if (this.#closed) return Promise.reject(new ClosedError(this.#o.name));
    signal?.throwIfAborted();
    while (this.#idle.length > 0) {
      const member = this.#idle.shift()!;
      if (!this.#o.isAlive(member)) {
        this.#destroy(member);
        continue;
      }
      this.#busy.add(member);
      this.#refill();
      return Promise.resolve(member);
    }
    if (this.#waiters.length >= this.#o.maxQueue) {
      return Promise.reject(new QueueFullError(this.#o.name, this.#o.maxQueue));
    }
    const waited = new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error("aborted", { cause: signal.reason }));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
      this.#refill();
    });
    const waiting = traceAdmission(Math.max(0, this.#waiters.length - 1));
    waited.then(
      () => waiting.end(),
      (error: unknown) => waiting.end(error),
    );
    return waited;
  }

  /** Gives a member back. Not reusable (it died, timed out, could not reset): destroyed and replaced. */
  release(member: T, reusable: boolean): void {
    if (!this.#busy.delete(member)) return;
    if (!reusable || this.#closed || !this.#o.isAlive(member)) {
      this.#destroy(member);
      this.#refill();
      return;
    }
    this.#offer(member);
  }

  /** Takes a member out of the pool for good (a session); the pool starts a replacement. */
  detach(member: T): void {
    if (this.#busy.delete(member)) this.#refill();
  }

  #offer(member: T): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
      this.#busy.add(member);
      waiter.resolve(member);
      return;
    }
    this.#idle.push(member);
    for (const listener of [...this.#startListeners]) listener();
  }

  /** Moves standby members into serving slots that are empty (a dead standby is dropped). */
  #promote(): void {
    while (this.#idle.length + this.#busy.size < this.#o.size && this.#standby.length > 0) {
      const member = this.#standby.shift()!;
      if (this.#o.isAlive(member)) this.#offer(member);
      else this.#destroy(member);
    }
  }

  /** A member that has just started: to a serving slot if one is empty, else to standby. */
  #arrive(member: T): void {
    if (this.#idle.length + this.#busy.size < this.#o.size) {
      this.#offer(member);
      return;
    }
    this.#standby.push(member);
    for (const listener of [...this.#startListeners]) listener();
  }

  #refill(): void {
    if (this.#closed) return;
    this.#promote();
    const up = this.#idle.length + this.#busy.size;
    let missing = this.#o.size - (up + this.#starting);
    if (up === 0) missing = Math.min(missing, 1 - this.#starting);
    // Standbys only once every serving slot is up (then `#starting` counts standbys alone).
    if (up >= this.#o.size) missing = (this.#o.standby ?? 0) - (this.#standby.length + this.#starting);
    for (let i = 0; i < missing; i++) {
      this.#starting++;
      this.#o.create().then(
        (member) => {
          this.#starting--;
          this.#lastError = undefined;
          if (this.#closed) {
            this.#destroy(member);
            return;
          }
          this.#arrive(member);
          // The first member is up: the rest of the pool (and then its standbys) starts now.
          this.#refill();
        },
        (error: unknown) => {
          this.#starting--;
          this.#lastError = error;
          // Every waiter would hit the same failure: tell them now rather than hang. The next
          // acquire tries again.
          for (const w of this.#waiters.splice(0)) {
            if (w.onAbort) w.signal?.removeEventListener("abort", w.onAbort);
            w.reject(error);
          }
          for (const listener of [...this.#startListeners]) listener();
        },
      );
    }
  }

  /** The last start failure, if the most recent start failed. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /** Stops accepting work, fails waiters, destroys idle members; busy ones are destroyed on release. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.reject(new ClosedError(this.#o.name));
    const idle = [...this.#idle.splice(0), ...this.#standby.splice(0)];
    for (const listener of [...this.#startListeners]) listener();
    await Promise.allSettled(idle.map((m) => this.#o.destroy(m)));
  }

  /** Like close(), and destroys members that are in use too. */
  async destroy(): Promise<void> {
    const busy = [...this.#busy];
    this.#busy.clear();
    await Promise.allSettled([this.close(), ...busy.map((m) => this.#o.destroy(m))]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
