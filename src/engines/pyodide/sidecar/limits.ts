// The run's limits as this process enforces them from inside.
// - Memory cap: `WebAssembly.Memory.prototype.grow` refuses to grow past the run's `memoryMb`, so
//   malloc fails inside WASM and Python raises MemoryError instead of the process growing.
// - Deadline: CPython (Emscripten build) polls `Module.Py_EmscriptenSignalBuffer[0]` every few dozen
//   bytecodes. `interruptSource` is an object whose index-0 getter returns SIGINT once the run's
//   deadline has passed — on this thread, so the cross-thread race that loses ≈3 % of
//   SharedArrayBuffer signals cannot happen — and repeats it every 50 ms while the run has not ended
//   (a guest that swallows KeyboardInterrupt gets another). Code stuck in C (time.sleep, a regex)
//   never polls: the host's SIGKILL is the rung after this one.

const WASM_PAGE = 65536;

/** The cap for the current run, and what this process saw of it (the host's verdict uses `hit`). */
export const memory = { capBytes: Number.POSITIVE_INFINITY, hit: false, peakBytes: 0 };

// The TS libs this project uses carry no WebAssembly declarations; this is the little we touch.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(this: WasmMemory, delta: number): number;
}

export function capMemoryGrowth(): void {
  const WasmMemoryProto = (globalThis as unknown as { WebAssembly: { Memory: { prototype: WasmMemory } } }).WebAssembly
    .Memory.prototype;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with .call(memory)
  const realGrow = WasmMemoryProto.grow;
  WasmMemoryProto.grow = function grow(this: WasmMemory, delta: number): number {
    const next = this.buffer.byteLength + delta * WASM_PAGE;
    if (next > memory.capBytes) {
      memory.hit = true;
      throw new RangeError("wasmcell: WASM memory cap reached");
    }
    memory.peakBytes = Math.max(memory.peakBytes, next);
    return realGrow.call(this, delta);
  };
}

const SIGINT = 2;
const RESEND_MS = 50;

/** When the current run must stop (performance.now() time), and whether the interrupt fired. */
export const deadline = { at: Number.POSITIVE_INFINITY, lastSent: Number.NEGATIVE_INFINITY, fired: false };

/** Handed to `setInterruptBuffer`: slot 0 turns into SIGINT when the deadline passes. */
export const interruptSource: Record<number, number> = Object.create(null) as Record<number, number>;
Object.defineProperty(interruptSource, 0, {
  get() {
    const now = performance.now();
    if (now < deadline.at || now - deadline.lastSent < RESEND_MS) return 0;
    deadline.lastSent = now;
    deadline.fired = true;
    return SIGINT;
  },
  set() {
    // CPython writes 0 back after reading; the getter is the only source of truth.
  },
});
