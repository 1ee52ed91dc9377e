// A per-thread hook the interrupt handler calls on every poll, while guest code runs. The thread pool's
// worker sets it (src/engines/quickjs-threads/priority.ts: a CPU-bound stretch lowers its thread's
// priority); nothing else does, so in-process and on edge runtimes it stays unset and costs one check.
// It is host code: it sees no guest value and cannot end the run (the interrupt's verdict is the run's).

let hook: (() => void) | undefined;

/** Sets (or clears) this thread's poll hook. */
export function setPollHook(fn: (() => void) | undefined): void {
  hook = fn;
}

/** Calls the hook, if any. */
export function runPollHook(): void {
  hook?.();
}
