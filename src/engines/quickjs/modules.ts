// WASM modules and the runtimes ("cells") inside them.
//
// A QuickJS WASM module is one emscripten instance: one linear memory, one shadow stack. If anything
// throws out of it mid-call — an emscripten abort (`Assertion failed: list_empty(&rt->gc_obj_list)`,
// quickjs-emscripten#257), a trap, or V8's own "Maximum call stack size exceeded" when QuickJS recursion
// in C outruns the host's native stack — its C state is half-unwound and it must never run again. Such a
// module is *poisoned*: every cell in it dies, and the engine swaps in a spare module that was already
// instantiated in the background (see ModulePool), so nobody waits for a cold start.
//
// A cell is a QuickJS runtime plus its service context (service.ts), reused across runs: each run gets a
// fresh user context in it and the context is freed when the run ends. A cell goes back to the pool only
// after a run that ended cleanly; after a memory, stack, timeout or crash ending it is freed or dropped.

import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { WasmModuleSource } from "../../types.ts";
import { quickjsVariant } from "./wasm.ts";
import { SERVICE_FILENAME, SERVICE_SOURCE } from "./service.ts";

/** What the interrupt handler asks of the run currently using a cell. */
export interface InterruptSource {
  shouldInterrupt(): boolean;
  /** Wakes a run that is waiting for a timer or host call (its module was poisoned under it). */
  wake(): void;
}

/**
 * QuickJS polls its interrupt handler only every 10,000 "ticks" (calls and backward jumps) — and a tick
 * can be a builtin such as `JSON.stringify` over a large structure, which polls nothing. A loop of such
 * builtins would then overrun the deadline by 10,000 × (one builtin call): minutes. We shorten the
 * window by writing `JSContext.interrupt_counter` (a plain int in linear memory) after each poll:
 * 64 ticks while polls come fast, 1 tick once a window took longer than SLOW_WINDOW_MS. The offset is
 * found and verified per module at start-up (calibrateCounter); if verification fails the engine falls
 * back to QuickJS's default polling and says so in `ModuleHost.counterOffset` (-1).
 */
const FAST_TICKS = 64;
const SLOW_WINDOW_MS = 2;
const QUICKJS_COUNTER_INIT = 10_000;

let moduleSerial = 0;

export class ModuleHost {
  readonly id = ++moduleSerial;
  readonly module: QuickJSWASMModule;
  /** Byte offset of `interrupt_counter` inside JSContext, or -1 when it could not be verified. */
  readonly counterOffset: number;
  alive = true;
  /** A retired module serves the cells it has but no new runs; it is dropped when they finish. */
  retired = false;
  /** Why the module was poisoned (for messages to runs that die with it). */
  poisonReason = "";
  readonly idle: Cell[] = [];
  readonly cells = new Set<Cell>();
  readonly #onPoison: (host: ModuleHost) => void;
  #heap32: Int32Array;

  private constructor(module: QuickJSWASMModule, onPoison: (host: ModuleHost) => void) {
    this.module = module;
    this.#onPoison = onPoison;
    this.#heap32 = new Int32Array(this.#buffer());
    this.counterOffset = this.#calibrateCounter();
  }

  /** The module's linear memory (a new ArrayBuffer after every growth). */
  #buffer(): ArrayBuffer {
    // getWasmMemory() re-runs the variant's init hook on every call: fetch the Memory object once.
    this.#memory ??= this.module.getWasmMemory() as unknown as { buffer: ArrayBuffer };
    return this.#memory.buffer;
  }
  #memory: { buffer: ArrayBuffer } | undefined;

  static async create(onPoison: (host: ModuleHost) => void, wasmModule?: WasmModuleSource): Promise<ModuleHost> {
    // Emscripten prints aborts ("Aborted(Assertion failed …)") to the host's stderr; they are kept as
    // the module's last words instead, and show up in the poison reason.
    const lastWords: string[] = [];
    const variant = await quickjsVariant(wasmModule, {
      printErr: (text: string) => void (lastWords.length < 10 && lastWords.push(text)),
      print: () => undefined,
    });
    const module = await newQuickJSWASMModuleFromVariant(variant);
    const host = new ModuleHost(module, onPoison);
    host.lastWords = lastWords;
    return host;
  }

  /** What the module printed to stderr (emscripten abort messages). */
  lastWords: string[] = [];

  /** Marks the module unusable; every cell dies with it. Idempotent. */
  poison(reason: string): void {
    if (!this.alive) return;
    this.alive = false;
    this.poisonReason = reason;
    this.idle.length = 0;
    for (const cell of this.cells) cell.dead = true;
    this.#onPoison(this);
    // Runs waiting on this module end now (as crashed) instead of at their next timer or deadline.
    for (const cell of this.cells) cell.source?.wake();
  }

  /** Bytes of linear memory the module has grown to (it never shrinks). */
  memoryBytes(): number {
    return this.#buffer().byteLength;
  }

  /**
   * Stops handing this module out: its linear memory has grown large (WASM memory never shrinks), so
   * the engine moves to the spare and lets this one be garbage-collected once its runs end.
   */
  retire(): void {
    if (this.retired || !this.alive) return;
    this.retired = true;
    this.idle.length = 0;
    this.#onPoison(this);
  }

  /** A cell from the pool, or a new one. Throws when the module is poisoned (or poisons it). */
  takeCell(): Cell {
    const idle = this.idle.pop();
    if (idle) {
      idle.settle();
      idle.inUse = true;
      return idle;
    }
    const cell = new Cell(this);
    this.cells.add(cell);
    cell.inUse = true;
    return cell;
  }

  /**
   * Returns a cell after a clean run, or frees it. `cleanup` (freeing the run's handles and context) is
   * deferred to idle time — or to the next takeCell, whichever comes first — so it is not part of the
   * run's latency; a cell that is not reused is cleaned up by the caller first.
   */
  releaseCell(cell: Cell, reusable: boolean, cleanup?: () => void): void {
    if (!this.alive || cell.dead || this.retired) {
      this.cells.delete(cell);
      return;
    }
    cell.inUse = false;
    if (reusable && cell.runs < 5_000 && this.idle.length < 8) {
      cell.pendingCleanup = cleanup;
      this.idle.push(cell);
      // Clean up and build the next run's context while the host is idle: JS_NewContext is most of a
      // small run. (A caller that runs back to back never yields to macrotasks: it pays both in takeCell.)
      const timer = setTimeout(() => {
        cell.settle();
        cell.prepareSpare();
      }, 0) as { unref?: () => void };
      timer.unref?.();
      return;
    }
    cell.pendingCleanup = cleanup;
    cell.settle();
    this.cells.delete(cell);
    cell.free();
  }

  /** Sets the interrupt counter of a context (see FAST_TICKS). */
  setCounter(ctx: QuickJSContext, ticks: number): void {
    if (this.counterOffset < 0) return;
    let heap = this.#heap32;
    if (heap.buffer !== this.#buffer()) heap = this.#heap32 = new Int32Array(this.#buffer());
    heap[(ctxPointer(ctx) + this.counterOffset) >> 2] = ticks;
  }

  /**
   * Finds `interrupt_counter` in JSContext: the int that drops by exactly the tick count of a known
   * loop, and that, when written, changes how soon the handler is polled. Returns -1 when unsure.
   */
  #calibrateCounter(): number {
    const rt = this.module.newRuntime();
    const ctx = rt.newContext();
    let polls = 0;
    rt.setInterruptHandler(() => {
      polls++;
      return false;
    });
    try {
      const run = (code: string) => {
        const r = ctx.evalCode(code, "calibrate.js", 0);
        (r.error ?? r.value).dispose();
      };
      const snapshot = () => {
        const heap = new Int32Array(this.#buffer());
        return Array.from({ length: 256 }, (_, i) => heap[(ctxPointer(ctx) >> 2) + i] ?? 0);
      };
      run("0");
      const before = snapshot();
      run("for (let i = 0; i < 100; i++) {}");
      const after = snapshot();
      const deltas: number[] = [];
      before.forEach((v, i) => {
        const a = after[i] ?? 0;
        if (v > a && v - a < 1000 && v <= QUICKJS_COUNTER_INIT) deltas.push(i * 4);
      });
      for (const offset of deltas) {
        // Writing 1 must make the next loop poll about once per tick.
        const heap = new Int32Array(this.#buffer());
        const saved = heap[(ctxPointer(ctx) + offset) >> 2] ?? 0;
        heap[(ctxPointer(ctx) + offset) >> 2] = 1;
        polls = 0;
        rt.setInterruptHandler(() => {
          polls++;
          new Int32Array(this.#buffer())[(ctxPointer(ctx) + offset) >> 2] = 1;
          return false;
        });
        run("for (let i = 0; i < 50; i++) {}");
        if (polls >= 50) return offset;
        new Int32Array(this.#buffer())[(ctxPointer(ctx) + offset) >> 2] = saved;
      }
      return -1;
    } finally {
      ctx.dispose();
      rt.dispose();
    }
  }
}

const SERVICE_INTRINSICS = {
  BaseObjects: true,
  Eval: true,
  Date: true,
  RegExp: true,
  RegExpCompiler: true,
  JSON: true,
  MapSet: true,
  TypedArrays: true,
};

/**
 * A QuickJS runtime with its service realm. One run (or one session) uses it at a time.
 */
export class Cell {
  readonly host: ModuleHost;
  readonly rt: QuickJSRuntime;
  readonly svc: QuickJSContext;
  readonly serialize: QuickJSHandle;
  readonly format: QuickJSHandle;
  readonly errorInfo: QuickJSHandle;
  /** The run (or session run) the interrupt handler answers to. */
  source: InterruptSource | undefined;
  /** The user context of the current run; its interrupt counter is shortened too. */
  userCtx: QuickJSContext | undefined;
  runs = 0;
  dead = false;
  /** Memory QuickJS reports for the runtime with only the service realm in it. */
  readonly baselineBytes: number;
  #lastPoll = 0;

  constructor(host: ModuleHost) {
    this.host = host;
    this.rt = host.module.newRuntime();
    this.rt.setInterruptHandler(() => this.#onPoll());
    // Only the intrinsics the service code uses: every object here is walked by each GC of the runtime.
    this.svc = this.rt.newContext({ intrinsics: SERVICE_INTRINSICS });
    const result = this.svc.evalCode(SERVICE_SOURCE, SERVICE_FILENAME, 0);
    if (result.error) {
      const detail = this.svc.dump(result.error) as unknown;
      result.error.dispose();
      throw new Error(`wasmcell: the service realm failed to start: ${JSON.stringify(detail)}`);
    }
    const api = result.value;
    this.serialize = this.svc.getProp(api, "serialize");
    this.format = this.svc.getProp(api, "format");
    this.errorInfo = this.svc.getProp(api, "errorInfo");
    api.dispose();
    this.baselineBytes = this.memoryUsed();
  }

  #onPoll(): boolean {
    const now = performance.now();
    const slow = now - this.#lastPoll > SLOW_WINDOW_MS;
    this.#lastPoll = now;
    const ticks = slow ? 1 : FAST_TICKS;
    this.host.setCounter(this.svc, ticks);
    if (this.userCtx?.alive) this.host.setCounter(this.userCtx, ticks);
    return this.source?.shouldInterrupt() ?? false;
  }

  #numbers = new Map<number, QuickJSHandle>();

  /** A number handle in the service realm, kept for the cell's life (the result-size cap, mostly). */
  numberHandle(n: number): QuickJSHandle {
    let h = this.#numbers.get(n);
    if (!h) {
      if (this.#numbers.size > 8) this.#freeNumbers();
      h = this.svc.newNumber(n);
      this.#numbers.set(n, h);
    }
    return h;
  }

  #freeNumbers(): void {
    for (const h of this.#numbers.values()) h.dispose();
    this.#numbers.clear();
  }

  #memoryLimit = -2;
  #stackLimit = -2;

  /** Sets the runtime's memory and stack limits, skipping the WASM calls when they are unchanged. */
  setLimits(memoryBytes: number, stackBytes: number | undefined): void {
    if (memoryBytes !== this.#memoryLimit) this.rt.setMemoryLimit((this.#memoryLimit = memoryBytes));
    if (stackBytes !== undefined && stackBytes !== this.#stackLimit)
      this.rt.setMaxStackSize((this.#stackLimit = stackBytes));
  }

  /** Arms the short polling window for a context that is about to run guest code. */
  armCounter(ctx: QuickJSContext): void {
    this.#lastPoll = performance.now();
    this.host.setCounter(ctx, FAST_TICKS);
    this.host.setCounter(this.svc, FAST_TICKS);
  }

  /** Bytes QuickJS has allocated in this runtime (all contexts). Costs one small object in the service realm. */
  memoryUsed(): number {
    const ffi = this.host.module.getFFI();
    const ptr = ffi.QTS_RuntimeComputeMemoryUsage(runtimePointer(this.rt), ctxPointer(this.svc) as never);
    // Borrow the object through the service context's own handle type so it is freed normally.
    const handle = (
      this.svc as unknown as { memory: { heapValueHandle(p: number): QuickJSHandle } }
    ).memory.heapValueHandle(ptr);
    try {
      const used = this.svc.getProp(handle, "memory_used_size");
      const n = this.svc.getNumber(used);
      used.dispose();
      return n;
    } finally {
      handle.dispose();
    }
  }

  /** Frees the runtime. An abort here (quickjs-emscripten#257) poisons the module instead of escaping. */
  inUse = false;
  #spare: QuickJSContext | undefined;
  /** The previous run's cleanup, if it has not run yet (see ModuleHost.releaseCell). */
  pendingCleanup: (() => void) | undefined;

  /** Runs the previous run's deferred cleanup, once. */
  settle(): void {
    const cleanup = this.pendingCleanup;
    this.pendingCleanup = undefined;
    if (cleanup && this.host.alive && !this.dead) cleanup();
  }

  /** A fresh user context: the one prepared in idle time, or a new one. Never one a run has used. */
  takeContext(): QuickJSContext {
    const spare = this.#spare;
    this.#spare = undefined;
    return spare ?? this.rt.newContext();
  }

  /** Creates the next run's context ahead of time, if this cell is idle and healthy. */
  prepareSpare(): void {
    if (this.#spare || this.inUse || this.pendingCleanup || this.dead || !this.host.alive || this.host.retired) return;
    try {
      // Unlimited while building it: the previous run's cap must not make context creation fail.
      this.setLimits(-1, undefined);
      this.#spare = this.rt.newContext();
    } catch (error) {
      this.host.poison(`preparing a context failed: ${describeHostError(error)}`);
    }
  }

  free(): void {
    if (this.dead || !this.host.alive) return;
    this.dead = true;
    try {
      this.#spare?.dispose();
      this.#spare = undefined;
      this.#freeNumbers();
      this.serialize.dispose();
      this.format.dispose();
      this.errorInfo.dispose();
      this.svc.dispose();
      this.rt.dispose();
    } catch (error) {
      this.host.poison(`freeing a runtime failed: ${describeHostError(error)}`);
    }
  }
}

/** The JSContext* of a context (quickjs-emscripten keeps it protected; the FFI needs it). */
export function ctxPointer(ctx: QuickJSContext): number {
  return (ctx as unknown as { ctx: { value: number } }).ctx.value;
}

function runtimePointer(rt: QuickJSRuntime): never {
  return (rt as unknown as { rt: { value: never } }).rt.value;
}

export function describeHostError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The current module plus a spare instantiated in the background. When the current one is poisoned,
 * the spare takes over at once and a new spare starts.
 */
export class ModulePool {
  #current: ModuleHost | undefined;
  #starting: Promise<ModuleHost> | undefined;
  #spare: Promise<ModuleHost> | undefined;
  #closed = false;
  /** How many modules were thrown away (for tests and diagnostics). */
  replaced = 0;
  /** The compiled module every instance comes from (`javascript.wasmModule`), or the variant's own file. */
  readonly wasmModule: WasmModuleSource | undefined;

  constructor(wasmModule?: WasmModuleSource) {
    this.wasmModule = wasmModule;
  }

  /** The live module; instantiates one (and its spare) on first use. */
  async get(): Promise<ModuleHost> {
    if (this.#current?.alive && !this.#current.retired) return this.#current;
    this.#starting ??= this.#promote();
    try {
      return await this.#starting;
    } finally {
      this.#starting = undefined;
    }
  }

  /** The live module if one is ready right now (no await on the hot path). */
  ready(): ModuleHost | undefined {
    return this.#current?.alive && !this.#current.retired ? this.#current : undefined;
  }

  async #promote(): Promise<ModuleHost> {
    const next = await (this.#spare ?? this.#create());
    this.#spare = undefined;
    this.#current = next;
    this.#refillSpare();
    return next;
  }

  #create(): Promise<ModuleHost> {
    return ModuleHost.create((host) => this.#onPoison(host), this.wasmModule);
  }

  #refillSpare(): void {
    if (this.#closed || this.#spare) return;
    const spare = this.#create();
    // A failed spare is retried by the next promotion, not reported here.
    spare.catch(() => {
      if (this.#spare === spare) this.#spare = undefined;
    });
    this.#spare = spare;
  }

  #onPoison(host: ModuleHost): void {
    this.replaced++;
    if (this.#current === host) this.#current = undefined;
  }

  close(): void {
    this.#closed = true;
    this.#current = undefined;
    this.#spare = undefined;
  }

  /** Poisons the live module: runs in flight end as crashed at once. */
  destroy(): void {
    const current = this.#current;
    this.close();
    current?.poison("the sandbox was destroyed");
  }
}
