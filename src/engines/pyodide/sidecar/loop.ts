// The idle wait of the event loop top-level `await` runs on (loop.py): blocks this thread for up to
// 50 ms without spinning (Emscripten's time.sleep busy-waits). Like hostFetchForPython, what Python
// holds is a null-prototype arrow function of one number: nothing reachable from it leads to the realm.

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const MAX_IDLE_MS = 50;

/** What loop.py's `_wasmcell_idle_connect` is handed. */
export const idleForPython = (ms: unknown): void => {
  if (typeof ms === "number" && ms > 0) Atomics.wait(sleeper, 0, 0, Math.min(ms, MAX_IDLE_MS));
};
Object.setPrototypeOf(idleForPython, null);
