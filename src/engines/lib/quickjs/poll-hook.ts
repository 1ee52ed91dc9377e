// A per-thread hook the interrupt handler calls on every poll, while guest code runs, with the poll's
// verdict (`stopping`: the run is being interrupted). The thread pool's worker sets it
// (src/engines/quickjs/threads/priority.ts: a CPU-bound stretch lowers its thread's priority, and an
// interrupt puts it back so the run ends at full speed); nothing else does, so in-process and on edge
// runtimes it stays unset and costs one check. It is host code: it sees no guest value and cannot
// change the verdict.

let hook: ((stopping: boolean) => void) | undefined;

/** Sets (or clears) this thread's poll hook. */
export function setPollHook(fn: ((stopping: boolean) => void) | undefined): void {
  hook = fn;
}

/** Calls the hook, if any. */
export function runPollHook(stopping: boolean): void {
  hook?.(stopping);
}
