// WASM modules and the pool that keeps one live with a spare.
//
// A QuickJS WASM module is one emscripten instance: one linear memory, one shadow stack. If anything
// throws out of it mid-call — an emscripten abort (`Assertion failed: list_empty(&rt->gc_obj_list)`,
// quickjs-emscripten#257), a trap, or V8's own "Maximum call stack size exceeded" when QuickJS recursion
// in C outruns the host's native stack — its C state is half-unwound and it must never run again. Such a
// module is *poisoned*: every cell in it dies, and the engine swaps in a spare module that was already
// instantiated in the background (see ModulePool), so nobody waits for a cold start. A module whose
// memory has grown large is *retired* instead: it finishes the runs it has and takes no new ones.
//
// A cell that is freed rather than reused (after a timeout, a memory failure, a queued job, …) is
// replaced in idle time, so the cost of building a runtime is not paid by the next run (WasmModule.#owed).
//
// The runtimes inside a module ("cells") are in cell.ts.

import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSWASMModule } from "quickjs-emscripten-core";
import type { WasmModuleSource } from "../../../core/types.ts";
import { Cell } from "./cell.ts";
import { contextPointer, findInterruptCounter, findRandomState } from "./internals.ts";
import { quickjsVariant } from "./wasm.ts";
import { describeHostError } from "../../../kit/failures.ts";

/** Cells a module keeps warm for the next runs. */
const MAX_IDLE_CELLS = 8;
/** Runs one cell serves before it is replaced (bounds what a long-lived runtime can accumulate). */
const MAX_RUNS_PER_CELL = 5_000;

/** Where the fields the engine writes sit inside a JSContext of this build (byte offsets). */
export interface ContextLayout {
  /** `interrupt_counter`, or -1 when it could not be verified (QuickJS's own polling is kept). */
  counterOffset: number;
  /** `random_state` (findRandomState). */
  randomOffset: number;
}

let moduleSerial = 0;

export class WasmModule {
  readonly id = ++moduleSerial;
  readonly quickjs: QuickJSWASMModule;
  /**
   * Byte offset of `interrupt_counter` inside JSContext, or -1 when it could not be verified (see
   * Cell: the polling window is shortened by writing it).
   */
  readonly counterOffset: number;
  /** Byte offset of `random_state` inside JSContext (findRandomState): every context is reseeded. */
  readonly randomOffset: number;
  /** Whether its cells evaluate the service realm's core only, the rest on first need (cell.ts). */
  readonly lazyService: boolean;
  alive = true;
  /** A retired module serves the cells it has but no new runs; it is dropped when they finish. */
  retired = false;
  /** Why the module was poisoned (for messages to runs that die with it). */
  poisonReason = "";
  readonly idle: Cell[] = [];
  readonly cells = new Set<Cell>();
  /** Cells refused or freed because they could not be proven clean (for tests and diagnostics). */
  cellsRetired = 0;
  /** Cells built on a run's path (takeCell found none idle) and in idle time (for tests and diagnostics). */
  readonly cellsBuilt = { onRunPath: 0, inIdleTime: 0 };
  /** Tells the pool this module takes no new runs (poisoned or retired). */
  readonly #onUnusable: (module: WasmModule) => void;
  /** Whether the pool still wants idle-time work from this module (false once the engine is closing). */
  readonly #wanted: () => boolean;
  /**
   * Cells freed (not reused) that no new cell has replaced yet. Idle time builds that many, one per
   * macrotask; a cell a run builds on its own path replaces one too. So the module never holds more
   * cells than it did before the frees, and never more than MAX_IDLE_CELLS idle.
   */
  #owed = 0;
  #rebuildScheduled = false;
  #heap32: Int32Array;
  #memory: { readonly buffer: ArrayBuffer };

  private constructor(
    quickjs: QuickJSWASMModule,
    onUnusable: (module: WasmModule) => void,
    wanted: () => boolean,
    layout: ContextLayout | undefined,
    lazyService: boolean,
  ) {
    this.quickjs = quickjs;
    this.lazyService = lazyService;
    this.#onUnusable = onUnusable;
    this.#wanted = wanted;
    // getWasmMemory() re-runs the variant's init hook on every call: fetch the Memory object once.
    this.#memory = (quickjs as unknown as { getWasmMemory(): { readonly buffer: ArrayBuffer } }).getWasmMemory();
    this.#heap32 = new Int32Array(this.#memory.buffer);
    // The offsets are the build's (fields of JSContext): found once, they hold for every instance of it.
    if (!layout) {
      const rt = quickjs.newRuntime();
      try {
        layout = {
          counterOffset: findInterruptCounter(rt, () => this.#heap()),
          randomOffset: findRandomState(rt, () => this.#heap()),
        };
      } finally {
        rt.dispose();
      }
    }
    // Without it every context would draw what the clock seeded (see findRandomState): refuse the build.
    if (layout.randomOffset < 0) throw new Error("QuickJS module: Math.random's state was not found in JSContext");
    this.counterOffset = layout.counterOffset;
    this.randomOffset = layout.randomOffset;
  }

  /** The offsets this module found, for the next instance of the same build. */
  get layout(): ContextLayout {
    return { counterOffset: this.counterOffset, randomOffset: this.randomOffset };
  }

  /**
   * `lazyService`: its cells evaluate only the service realm's core when built (the stateless pool's
   * modules); without it, the whole service (a session's module: its snapshot records the service).
   */
  static async create(
    onUnusable: (module: WasmModule) => void,
    wanted: () => boolean,
    wasmModule?: WasmModuleSource,
    layout?: ContextLayout,
    lazyService = false,
  ): Promise<WasmModule> {
    // Emscripten prints aborts ("Aborted(Assertion failed …)") to the host's stderr; the same text is
    // in the error the abort throws, which is what poisons the module and names the reason.
    const variant = await quickjsVariant(wasmModule, { printErr: () => undefined, print: () => undefined });
    return new WasmModule(await newQuickJSWASMModuleFromVariant(variant), onUnusable, wanted, layout, lazyService);
  }

  /** The linear memory as 32-bit words (a new view after every growth). */
  #heap(): Int32Array {
    if (this.#heap32.buffer !== this.#memory.buffer) this.#heap32 = new Int32Array(this.#memory.buffer);
    return this.#heap32;
  }

  /** Marks the module unusable; every cell dies with it. Idempotent. */
  poison(reason: string): void {
    if (!this.alive) return;
    this.alive = false;
    this.poisonReason = reason;
    this.idle.length = 0;
    this.#owed = 0;
    for (const cell of this.cells) cell.dead = true;
    this.#onUnusable(this);
    // Runs waiting on this module end now (as crashed) instead of at their next timer or deadline.
    for (const cell of this.cells) cell.run?.wake();
  }

  /**
   * The 4 KiB pages of this pristine module's memory that are not all zero (set by SessionModules in
   * idle time), so a restore zeroes only those instead of reading all of memory; undefined: unknown.
   */
  dirtyPages: number[] | undefined;

  /** The module's linear memory (a snapshot reads it, a restore writes it: snapshot.ts). */
  get memory(): { readonly buffer: ArrayBuffer } {
    return this.#memory;
  }

  /** Bytes of linear memory the module has grown to (it never shrinks). */
  memoryBytes(): number {
    return this.#memory.buffer.byteLength;
  }

  /**
   * Stops handing this module out: its linear memory has grown large (WASM memory never shrinks), so
   * the engine moves to the spare and lets this one be garbage-collected once its runs end.
   */
  retire(): void {
    if (this.retired || !this.alive) return;
    this.retired = true;
    this.idle.length = 0;
    this.#owed = 0;
    this.#onUnusable(this);
  }

  /**
   * A cell proven clean, or a new one. An idle cell is checked again here (not only when it was released):
   * its deferred cleanup has just run, and anything left behind — a queued promise job, a context, a
   * handle, a run still attached — retires it. Throws when the module is poisoned (or poisons it).
   */
  takeCell(): Cell {
    for (let idle = this.idle.pop(); idle; idle = this.idle.pop()) {
      idle.settle();
      if (idle.dead || !this.alive) continue;
      if (idle.unclean() === undefined) {
        idle.inUse = true;
        return idle;
      }
      this.#discard(idle);
    }
    const cell = new Cell(this);
    this.cells.add(cell);
    this.cellsBuilt.onRunPath++;
    if (this.#owed > 0) this.#owed--;
    cell.inUse = true;
    return cell;
  }

  /**
   * Returns a cell after a run, or frees it. It goes back to the pool only if the run ended in a way that
   * leaves the runtime reusable (`reusable`) and no promise job is queued. `cleanup` (freeing the run's
   * handles and context) is deferred to idle time — or to the next takeCell, whichever comes first — so it
   * is not part of the run's latency; takeCell proves the cell clean after it.
   */
  releaseCell(cell: Cell, reusable: boolean, cleanup?: () => void): void {
    if (!this.alive || cell.dead || this.retired) {
      this.cells.delete(cell);
      return;
    }
    cell.inUse = false;
    cell.pendingCleanup = cleanup;
    if (reusable && !cell.rt.hasPendingJob() && cell.runs < MAX_RUNS_PER_CELL && this.idle.length < MAX_IDLE_CELLS) {
      this.idle.push(cell);
      // Clean up and build the next run's context while the host is idle: JS_NewContext is most of a
      // small run. (A caller that runs back to back never yields to macrotasks: it pays both in takeCell.)
      inIdleTime(() => {
        cell.settle();
        // A closing engine takes no more runs: a context built now would only hold memory.
        if (this.#wanted()) cell.prepareSpare();
      });
      return;
    }
    cell.settle();
    this.#discard(cell);
  }

  /**
   * Frees a cell that will not be reused and, if the pool had room for it, has a new one built in its
   * place in idle time (a cell freed because MAX_IDLE_CELLS were already idle is not replaced).
   */
  #discard(cell: Cell): void {
    this.cellsRetired++;
    this.cells.delete(cell);
    cell.free();
    if (!this.alive || this.idle.length >= MAX_IDLE_CELLS || this.#owed >= MAX_IDLE_CELLS) return;
    this.#owed++;
    this.#scheduleRebuild();
  }

  #scheduleRebuild(): void {
    if (this.#rebuildScheduled) return;
    this.#rebuildScheduled = true;
    inIdleTime(() => {
      this.#rebuildScheduled = false;
      this.#rebuild();
    });
  }

  /**
   * Builds one owed cell, in idle time. A brand-new runtime (never the freed one), and only in a module
   * that is alive, not retired and still wanted by an open engine: a cell built in a poisoned module
   * would run on half-unwound C state, and one built in a retired module or for a closed engine would
   * only hold memory. A throw while building poisons the module, as on the run path; it never escapes
   * the timer.
   */
  #rebuild(): void {
    if (this.#owed === 0 || !this.alive || this.retired || !this.#wanted()) return;
    if (this.idle.length >= MAX_IDLE_CELLS) {
      this.#owed = 0;
      return;
    }
    this.#owed--;
    let cell: Cell;
    try {
      cell = new Cell(this);
    } catch (error) {
      this.poison(`building a runtime in idle time failed: ${describeHostError(error)}`);
      return;
    }
    this.cells.add(cell);
    this.cellsBuilt.inIdleTime++;
    this.idle.push(cell);
    cell.prepareSpare();
    if (this.#owed > 0) this.#scheduleRebuild();
  }

  /** Gives a context a Math.random state from the host's CSPRNG (never 0: xorshift would stay at 0). */
  seedRandom(ctx: QuickJSContext): void {
    const at = (contextPointer(ctx) + this.randomOffset) >> 2;
    const heap = this.#heap();
    const seed = takeSeed();
    heap[at] = seed[0];
    heap[at + 1] = seed[1];
  }

  /** Sets the interrupt counter of a context (see Cell's polling window). */
  setCounter(ctx: QuickJSContext, ticks: number): void {
    if (this.counterOffset < 0) return;
    this.#heap()[(contextPointer(ctx) + this.counterOffset) >> 2] = ticks;
  }
}

/**
 * Seeds for Math.random, drawn from the host's CSPRNG a block at a time: one `getRandomValues` call
 * per context cost ~3 µs on the path of every run, fork and resume (0.01 µs per seed from a block).
 * Each pair of words is handed out once and wiped from the block as it goes; the block lives in host
 * memory no guest can read.
 */
const SEED_WORDS = 512;
const seedBlock = new Int32Array(SEED_WORDS);
let seedNext = SEED_WORDS;
const seedOut: [number, number] = [0, 0];

function takeSeed(): readonly [number, number] {
  if (seedNext >= SEED_WORDS) {
    crypto.getRandomValues(seedBlock);
    seedNext = 0;
  }
  seedOut[0] = seedBlock[seedNext]!;
  seedOut[1] = seedBlock[seedNext + 1]!;
  seedBlock[seedNext] = 0;
  seedBlock[seedNext + 1] = 0;
  seedNext += 2;
  if (seedOut[0] === 0 && seedOut[1] === 0) seedOut[0] = 1;
  return seedOut;
}

/**
 * Runs `work` once, in a later macrotask: after the current run's result has reached its caller (that is
 * a promise continuation, a microtask). At the first of two turns of the loop:
 * - setImmediate, where the host has it (Node, Bun): it runs once the I/O already waiting has been
 *   handled, before the loop waits for more, so a request arriving after that finds the work done. It is
 *   referenced (an unref'd immediate lets the loop sleep until the next timer or I/O, which is late), so
 *   it holds the process for that one turn at most.
 * - setTimeout(0), unref'd: the only one in the edge build; and in Node it keeps the guarantee a timer
 *   gives, that the work is done before any timer set after it fires (an immediate gives none when the
 *   loop is busy inside its timers phase).
 */
function inIdleTime(work: () => void): void {
  let pending = true;
  const once = () => {
    if (!pending) return;
    pending = false;
    clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
    work();
  };
  const timer = setTimeout(once, 0) as { unref?: () => void };
  timer.unref?.();
  if (typeof setImmediate === "function") setImmediate(once);
}

/**
 * The current module plus a spare instantiated in the background. When the current one is poisoned or
 * retired, the spare takes over at once and a new spare starts.
 */
export class ModulePool {
  #current: WasmModule | undefined;
  #starting: Promise<WasmModule> | undefined;
  #spare: Promise<WasmModule> | undefined;
  #closed = false;
  /** Set as soon as the engine starts closing (before its runs drain): no more idle-time work. */
  #closing = false;
  /** How many modules were thrown away (for tests and diagnostics). */
  replaced = 0;
  /** The compiled module every instance comes from (`javascript.wasmModule`), or the variant's own file. */
  readonly wasmModule: WasmModuleSource | undefined;

  constructor(wasmModule?: WasmModuleSource) {
    this.wasmModule = wasmModule;
  }

  /** The live module; instantiates one (and its spare) on first use. */
  async get(): Promise<WasmModule> {
    if (this.#current?.alive && !this.#current.retired) return this.#current;
    this.#starting ??= this.#promote();
    try {
      return await this.#starting;
    } finally {
      this.#starting = undefined;
    }
  }

  /** The live module if one is ready right now (no await on the hot path). */
  ready(): WasmModule | undefined {
    return this.#current?.alive && !this.#current.retired ? this.#current : undefined;
  }

  async #promote(): Promise<WasmModule> {
    const next = await (this.#spare ?? this.#create());
    this.#spare = undefined;
    this.#current = next;
    this.#refillSpare();
    return next;
  }

  #create(): Promise<WasmModule> {
    return WasmModule.create(
      (module) => this.#onUnusable(module),
      () => !this.#closing,
      this.wasmModule,
      undefined,
      true,
    );
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

  #onUnusable(module: WasmModule): void {
    this.replaced++;
    if (this.#current === module) this.#current = undefined;
  }

  /** Stops idle-time work (cell rebuilds, spare contexts) in every module; runs in flight still finish. */
  stopIdleWork(): void {
    this.#closing = true;
  }

  close(): void {
    this.#closing = true;
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
