// A run's timers (setTimeout/setInterval), held on the host: the callback and argument handles are
// duplicated into the set and freed when the timer fires for the last time, is cleared, or the run ends.
// Nothing here outlives its run.

import type { QuickJSHandle } from "quickjs-emscripten-core";

export interface Timer {
  fn: QuickJSHandle;
  args: QuickJSHandle[];
  due: number;
  /** The interval, for setInterval; undefined for a one-shot timer. */
  repeat: number | undefined;
}

/** The longest delay a timer can have (like Node: anything else, or under 1 ms, is 1 ms). */
const MAX_DELAY_MS = 2 ** 31 - 1;

export class Timers {
  readonly #timers = new Map<number, Timer>();
  #serial = 0;
  #created = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#timers.size;
  }

  /** Whether one more timer may be created in this run (limits.maxTimers counts every one created). */
  canCreate(): boolean {
    return this.#created < this.#max;
  }

  /** Adds a timer holding duplicates of `fn` and `args`; returns its id. */
  add(fn: QuickJSHandle, args: QuickJSHandle[], delay: number, repeat: boolean): number {
    this.#created++;
    const ms = delay >= 1 && delay <= MAX_DELAY_MS ? delay : 1;
    const id = ++this.#serial;
    this.#timers.set(id, {
      fn: fn.dup(),
      args: args.map((a) => a.dup()),
      due: performance.now() + ms,
      repeat: repeat ? ms : undefined,
    });
    return id;
  }

  clear(id: number): void {
    const t = this.#timers.get(id);
    if (!t) return;
    this.#timers.delete(id);
    free(t);
  }

  /** The earliest due time, or `until` if none is earlier. */
  nextDue(until: number): number {
    for (const t of this.#timers.values()) if (t.due < until) until = t.due;
    return until;
  }

  /** Timers due at `now`, in due order (then creation order). */
  due(now: number): [number, Timer][] {
    return [...this.#timers.entries()]
      .filter(([, t]) => t.due <= now)
      .sort((a, b) => a[1].due - b[1].due || a[0] - b[0]);
  }

  /**
   * Takes a due timer for firing: a one-shot timer leaves the set (the caller frees it after the call
   * with `free`), an interval is rescheduled. Undefined if it was cleared meanwhile.
   */
  take(id: number, now: number): Timer | undefined {
    const t = this.#timers.get(id);
    if (!t) return undefined;
    if (t.repeat === undefined) this.#timers.delete(id);
    else t.due = now + t.repeat;
    return t;
  }

  /** Frees every timer still held; `dispose` wraps each free (the caller poisons the module on a throw). */
  release(dispose: (fn: () => void) => void): void {
    for (const t of this.#timers.values()) dispose(() => free(t));
    this.#timers.clear();
  }
}

export function free(t: Timer): void {
  if (t.fn.alive) t.fn.dispose();
  for (const a of t.args) if (a.alive) a.dispose();
}
