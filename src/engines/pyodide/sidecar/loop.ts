// The idle wait of the event loop top-level `await` runs on (loop.py): blocks this thread for up to
// 50 ms without spinning (Emscripten's time.sleep busy-waits). Python reaches it only through the
// bridge device (bridge.ts), by writing the number of milliseconds.

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const MAX_IDLE_MS = 50;

export function idleWait(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, Math.min(ms, MAX_IDLE_MS));
}
