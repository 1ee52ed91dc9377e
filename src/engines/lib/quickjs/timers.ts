// A run's timers (setTimeout/setInterval and their clears), held on the host: each one's guest callback
// and arguments as handles, when it is due, whether it repeats, and whether it keeps the run alive.
// The run's event loop (run.ts) asks what is due and fires it; every handle is freed when a timer ends
// or the run is released. Counted against `limits.maxTimers` per run.

import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";

interface Timer {
  fn: QuickJSHandle;
  args: QuickJSHandle[];
  due: number;
  repeat: number | undefined;
  /** Does not keep the run alive by itself (AbortSignal.timeout), like an unref'd timer in Node. */
  weak?: boolean;
}

/** A timer the run may not create (over the cap): the message the guest's exception carries. */
export class TooManyTimers extends Error {}

export class Timers {
  readonly #byId = new Map<number, Timer>();
  readonly #max: number;
  #serial = 0;
  #created = 0;

  constructor(maxTimers: number) {
    this.#max = maxTimers;
  }

  get size(): number {
    return this.#byId.size;
  }

  /** Some timer that keeps the run alive is pending. */
  anyStrong(): boolean {
    for (const t of this.#byId.values()) if (!t.weak) return true;
    return false;
  }

  /** The earliest due time, or `until` if none is sooner. */
  nextDue(until: number): number {
    for (const t of this.#byId.values()) if (t.due < until) until = t.due;
    return until;
  }

  /** Adds a timer (the handles are duplicated: the caller's stay the caller's); returns its id. */
  add(
    ctx: QuickJSContext,
    fn: QuickJSHandle,
    delayHandle: QuickJSHandle | undefined,
    rest: QuickJSHandle[],
    repeat: boolean,
  ): number {
    if (this.#created >= this.#max)
      throw new TooManyTimers(`too many timers: this run may create ${this.#max} (limits.maxTimers)`);
    this.#created++;
    let delay = delayHandle && ctx.typeof(delayHandle) === "number" ? ctx.getNumber(delayHandle) : 0;
    if (!(delay >= 1 && delay <= 2 ** 31 - 1)) delay = 1;
    const id = ++this.#serial;
    this.#byId.set(id, {
      fn: fn.dup(),
      args: rest.map((a) => a.dup()),
      due: performance.now() + delay,
      repeat: repeat ? delay : undefined,
    });
    return id;
  }

  unref(id: number): void {
    const t = this.#byId.get(id);
    if (t) t.weak = true;
  }

  clear(id: number): void {
    const t = this.#byId.get(id);
    if (!t) return;
    this.#byId.delete(id);
    free(t);
  }

  /**
   * Fires the timers due at `now`, oldest first (ties by id); a repeating one is due again after its
   * interval. `call` runs one callback; `stop` is asked before each, so a failed run fires no more.
   */
  fireDue(now: number, call: (fn: QuickJSHandle, args: QuickJSHandle[]) => void, stop: () => boolean): void {
    const due = [...this.#byId.entries()]
      .filter(([, t]) => t.due <= now)
      .sort((a, b) => a[1].due - b[1].due || a[0] - b[0]);
    for (const [id, t] of due) {
      if (stop()) return;
      if (!this.#byId.has(id)) continue; // cleared by an earlier callback in this turn
      if (t.repeat === undefined) this.#byId.delete(id);
      else t.due = now + t.repeat;
      call(t.fn, t.args);
      if (t.repeat === undefined) free(t);
    }
  }

  /** Frees every timer's handles (`dispose` guards each free). */
  release(dispose: (fn: () => void) => void): void {
    for (const t of this.#byId.values()) dispose(() => free(t));
    this.#byId.clear();
  }
}

function free(t: Timer): void {
  if (t.fn.alive) t.fn.dispose();
  for (const a of t.args) if (a.alive) a.dispose();
}
