// A cell: one QuickJS runtime with its service realm (service.ts), reused across runs. Each run gets a
// fresh user context in it, freed when the run ends. A cell serves another run only when `unclean()`
// finds nothing left behind (see the inventory there); otherwise it is freed and a new one (a new runtime,
// never the freed one) is built in its place in idle time (WasmModule.#discard), so the next run finds it
// warm.

import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
  VmCallResult,
} from "quickjs-emscripten-core";
import { adoptValue, contextPointer, runtimePointer, trackedContexts } from "./internals.ts";
import { refusedImportMessage } from "./classify.ts";
import { describeHostError } from "../../../kit/failures.ts";
import { runPollHook } from "./poll-hook.ts";
import { SERVICE_CORE_FILENAME, SERVICE_CORE_SOURCE, SERVICE_FILENAME, SERVICE_SOURCE } from "./service.ts";

/** What the interrupt handler asks of the run currently using a cell. */
export interface ActiveRun {
  shouldInterrupt(): boolean;
  /** Wakes a run that is waiting for a timer or host call (its module was poisoned under it). */
  wake(): void;
  /** Records an import the module loader refused; returns the message the guest's import fails with. */
  refuseImport(name: string): string;
}

/**
 * QuickJS polls its interrupt handler only every 10,000 "ticks" (calls and backward jumps) — and a tick
 * can be a builtin such as `JSON.stringify` over a large structure, which polls nothing. A loop of such
 * builtins would then overrun the deadline by 10,000 × (one builtin call): minutes. We shorten the
 * window by writing `JSContext.interrupt_counter` (a plain int in linear memory) after each poll:
 * 64 ticks while polls come fast, 1 tick once a window took longer than SLOW_WINDOW_MS. This is done
 * for the two contexts that ever run code: the service realm and the current run's user context. No
 * other context runs code: a previous run's context cannot (no promise job of it survives, see
 * `unclean`), and the spare context runs nothing until a run takes it and arms it.
 */
const FAST_TICKS = 64;
const SLOW_WINDOW_MS = 2;

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
 * What a cell needs of the WASM module it lives in (modules.ts's WasmModule is one): named here so
 * the module that builds cells and the cell do not import each other.
 */
export interface CellModule {
  readonly quickjs: QuickJSWASMModule;
  /**
   * Whether its cells evaluate only the service realm's core when built and the rest on first need
   * (service.ts). A session's cell evaluates the whole service at once: a snapshot records its entry
   * points (state.ts), and a session's runtime is built once for many runs.
   */
  readonly lazyService: boolean;
  readonly alive: boolean;
  readonly retired: boolean;
  readonly poisonReason: string;
  setCounter(ctx: QuickJSContext, ticks: number): void;
  seedRandom(ctx: QuickJSContext): void;
  poison(reason: string): void;
  retire(): void;
  memoryBytes(): number;
  releaseCell(cell: Cell, reusable: boolean, cleanup?: () => void): void;
}
/** The entry points of the whole service realm (service.ts, SERVICE_SOURCE). */
export interface ServiceEntries {
  serialize: QuickJSHandle;
  /** `serialize` without its fast path; absent in a restored session (it has no core to refuse first). */
  walk?: QuickJSHandle;
  format: QuickJSHandle;
  errorInfo: QuickJSHandle;
}

/** The wrappers of a runtime that already exists in a restored linear memory (see snapshot.ts). */
export interface RestoredCell extends ServiceEntries {
  rt: QuickJSRuntime;
  svc: QuickJSContext;
  baselineBytes: number;
}

export class Cell {
  readonly wasm: CellModule;
  readonly rt: QuickJSRuntime;
  /** The service realm's context: made with the cell, or (lazy-service module) on first need. */
  #svc: QuickJSContext | undefined;
  /** The service realm's core (service.ts, SERVICE_CORE_SOURCE), in a cell of a lazy-service module. */
  #plain: QuickJSHandle | undefined;
  /** The whole service realm's entry points, once evaluated (at once, or on first need). */
  #entries: ServiceEntries | undefined;
  /** Set while the service realm is built during a run: no interrupt reaches that fixed code of ours. */
  #building = false;
  /** The run (or session run) the interrupt handler answers to; undefined between runs. */
  run: ActiveRun | undefined;
  /** The user context of the current run; its interrupt counter is shortened too. */
  userCtx: QuickJSContext | undefined;
  runs = 0;
  dead = false;
  inUse = false;
  /** Handles of finished runs that were still alive after their release (must stay 0). */
  strayHandles = 0;
  /** The previous run's cleanup, if it has not run yet (see WasmModule.releaseCell). */
  pendingCleanup: (() => void) | undefined;
  /**
   * Memory QuickJS reports for the runtime before a run: with its service realm in it, or (lazy-service
   * module) with the first run's fresh context in it, measured as that is taken; grown by what parts
   * of the service built later took. 0 until measured.
   */
  baselineBytes = 0;
  #lastPoll = 0;
  #spare: QuickJSContext | undefined;
  #numbers = new Map<number, QuickJSHandle>();
  #memoryLimit = -2;
  #stackLimit = -2;

  /**
   * A new runtime with its service realm, or (`restored`) the wrappers of one that already exists in a
   * restored linear memory (snapshot.ts): the same interrupt handler and module loader are installed
   * either way, and nothing is evaluated in a restored runtime.
   */
  constructor(wasm: CellModule, restored?: RestoredCell) {
    this.wasm = wasm;
    this.rt = restored?.rt ?? wasm.quickjs.newRuntime();
    this.rt.setInterruptHandler(() => this.#onPoll());
    // There are no modules to load: the loader refuses every import itself, so a `denied` verdict is
    // something the host saw happen (this loader ran), not a message the guest could have written.
    this.rt.setModuleLoader((name) => ({
      error: new Error(this.run?.refuseImport(name) ?? refusedImportMessage(name.slice(0, 256))),
    }));
    if (restored) {
      this.#svc = restored.svc;
      this.#entries = { serialize: restored.serialize, format: restored.format, errorInfo: restored.errorInfo };
      this.baselineBytes = restored.baselineBytes;
      return;
    }
    if (wasm.lazyService) return;
    const svc = this.#newServiceContext();
    const result = this.#evaluateService(svc);
    if ("error" in result) {
      const detail = svc.dump(result.error) as unknown;
      result.error.dispose();
      throw new Error(`wasmcell: the service realm failed to start: ${JSON.stringify(detail)}`);
    }
    this.#entries = result;
    this.baselineBytes = this.memoryUsed();
  }

  /**
   * The service realm's context, made now if it was not (a lazy-service cell makes it when a run first
   * needs the service, outside the run's limits: `#outsideLimits`).
   */
  get svc(): QuickJSContext {
    return this.#svc ?? this.#outsideLimits(() => this.#newServiceContext());
  }

  #newServiceContext(): QuickJSContext {
    // Only the intrinsics the service code uses: every object here is walked by each GC of the runtime.
    const svc = this.rt.newContext({ intrinsics: SERVICE_INTRINSICS });
    this.#svc = svc;
    // Made during a run, it gets the run's short polling window at once (its code can run guest code).
    this.wasm.setCounter(svc, FAST_TICKS);
    return svc;
  }

  /** Evaluates SERVICE_SOURCE in the service realm: its entry points, or the exception it threw. */
  #evaluateService(svc: QuickJSContext): ServiceEntries | { error: QuickJSHandle } {
    const result = svc.evalCode(SERVICE_SOURCE, SERVICE_FILENAME, 0);
    if (result.error) return { error: result.error };
    const api = result.value;
    const entries = {
      serialize: svc.getProp(api, "serialize"),
      walk: svc.getProp(api, "walk"),
      format: svc.getProp(api, "format"),
      errorInfo: svc.getProp(api, "errorInfo"),
    };
    api.dispose();
    return entries;
  }

  /**
   * Builds part of the service realm during a run (a lazy-service cell builds each part the first time
   * one of its runs needs it: its context and core for a value to serialise, the rest for a value the
   * core refuses, console output or an exception). That is done outside the run's limits: the memory
   * cap is lifted and the interrupt handler answers "go on" while our fixed source is compiled and its
   * top level runs (no guest code runs meanwhile, and it always ends), then the cap is put back. What
   * it took is added to the baseline, so the run's peak does not count it.
   */
  #outsideLimits<T>(build: () => T): T {
    const memoryLimit = this.#memoryLimit;
    this.#building = true;
    try {
      this.setLimits(-1, undefined);
      // Measured with the cap lifted: at the cap, even the measurement's one object could not be made.
      const measure = this.baselineBytes > 0 ? (this.#svc ?? this.userCtx) : undefined;
      const before = measure ? this.memoryUsed(measure) : NaN;
      try {
        return build();
      } finally {
        const grown = measure ? this.memoryUsed(measure) - before : NaN;
        if (Number.isFinite(grown) && grown > 0) this.baselineBytes += grown;
      }
    } finally {
      this.#building = false;
      if (memoryLimit !== -2) this.setLimits(memoryLimit, undefined);
    }
  }

  /**
   * The core's `plain` (service.ts, SERVICE_CORE_SOURCE), evaluated now if it was not; or the
   * exception its evaluation threw (the guest's stack so deep there is no room to compile), returned
   * as the call that needed it would have returned it: the next call tries again.
   */
  #core(): QuickJSHandle | { error: QuickJSHandle } {
    if (this.#plain) return this.#plain;
    const svc = this.svc;
    return this.#outsideLimits(() => {
      const result = svc.evalCode(SERVICE_CORE_SOURCE, SERVICE_CORE_FILENAME, 0);
      if (result.error) return { error: result.error };
      this.#plain = result.value;
      return result.value;
    });
  }

  /** The whole service realm's entry points, evaluated now if they were not (as `#core`). */
  #service(): ServiceEntries | { error: QuickJSHandle } {
    if (this.#entries) return this.#entries;
    const svc = this.svc;
    return this.#outsideLimits(() => {
      const result = this.#evaluateService(svc);
      if (!("error" in result)) this.#entries = result;
      return result;
    });
  }

  /** Which parts of the service realm this runtime has built (for tests and diagnostics). */
  get serviceBuilt(): { context: boolean; core: boolean; all: boolean } {
    return { context: this.#svc !== undefined, core: this.#plain !== undefined, all: this.#entries !== undefined };
  }

  /** The whole service's entry points for a snapshot to record (a session's cell has them from the start). */
  serviceEntries(): ServiceEntries {
    const entries = this.#service();
    if ("error" in entries) {
      entries.error.dispose();
      throw new Error("wasmcell: the service realm could not be evaluated");
    }
    return entries;
  }

  /**
   * A guest value as the service's JSON text (service.ts): "=" and JSON for plain data, a tagged tree
   * for the rest, null when over `maxBytes`; or the exception guest code threw while it was read. In a
   * lazy-service cell without the rest, plain data is said by the core alone, and anything it refuses
   * goes to the rest's walker (its getters then run twice, as with the rest's own fast path).
   */
  serialize(value: QuickJSHandle, maxBytes: number): VmCallResult<QuickJSHandle> {
    if (!this.#entries) {
      const plain = this.#core();
      if ("error" in plain) return plain;
      const svc = this.svc;
      const r = svc.callFunction(plain, svc.undefined, value, this.numberHandle(maxBytes));
      if (r.error || svc.typeof(r.value) !== "undefined") return r;
      r.value.dispose();
      const entries = this.#service();
      if ("error" in entries) return entries;
      return svc.callFunction(entries.walk ?? entries.serialize, svc.undefined, value, this.numberHandle(maxBytes));
    }
    const svc = this.svc;
    return svc.callFunction(this.#entries.serialize, svc.undefined, value, this.numberHandle(maxBytes));
  }

  /** Console arguments as one line of text (service.ts `format`), or what a guest getter threw. */
  format(describe: QuickJSHandle | undefined, args: QuickJSHandle[]): VmCallResult<QuickJSHandle> {
    const entries = this.#service();
    if ("error" in entries) return entries;
    const svc = this.svc;
    return svc.callFunction(entries.format, svc.undefined, describe ?? svc.undefined, ...args);
  }

  /** An exception as the service's JSON description (service.ts `errorInfo`). */
  errorInfo(exception: QuickJSHandle, internalErrorProto: QuickJSHandle): VmCallResult<QuickJSHandle> {
    const entries = this.#service();
    if ("error" in entries) return entries;
    const svc = this.svc;
    return svc.callFunction(entries.errorInfo, svc.undefined, exception, internalErrorProto);
  }

  /** Frees the cached number handles (before a snapshot: a cache, rebuilt on demand). */
  dropCaches(): void {
    this.#freeNumbers();
  }

  /**
   * Why this runtime must not serve another run, or undefined when every check passes. The inventory of
   * what a run can leave in a runtime, and how each is checked (the state-inventory test proves each):
   *
   * | state                         | where it lives                         | check                              |
   * |-------------------------------|----------------------------------------|------------------------------------|
   * | promise jobs                  | JSRuntime job queue (all contexts)     | `rt.hasPendingJob()` is false      |
   * | user contexts                 | quickjs-emscripten's contextMap        | only the service realm (+ spare)   |
   * | handles into a user context   | the run's and the Guest's bookkeeping  | all freed (`strayHandles` is 0)    |
   * | the run's deferred cleanup    | `pendingCleanup`                       | has run                            |
   * | interrupt / poll state        | `run`, `userCtx`, the polling window   | detached; re-armed by each run     |
   * | service realm                 | its own context                        | its entry points are still alive   |
   * | memory / stack limits         | JSRuntime                              | set by every run before it starts  |
   * | FinalizationRegistry callbacks| queued by GC in a later run            | not installed in user contexts     |
   * | timers, host calls, files     | host side, per Run                     | freed with the Run; never shared   |
   *
   * Garbage of a freed context (cycles QuickJS collects later) stays in the runtime until its GC, but
   * nothing can run it: only a queued job, a finaliser or a live handle could, and each is checked above.
   */
  unclean(): string | undefined {
    if (this.dead || !this.wasm.alive) return "the runtime is dead";
    if (this.pendingCleanup) return "the previous run's cleanup has not run";
    if (this.run || this.userCtx) return "a run is still attached";
    if (this.strayHandles > 0) return `${this.strayHandles} handles of a finished run are alive`;
    try {
      if (this.rt.hasPendingJob()) return "a promise job is queued";
      const contexts = trackedContexts(this.rt);
      const expected = (this.#svc ? 1 : 0) + (this.#spare?.alive ? 1 : 0);
      if (contexts !== expected) return `${contexts} contexts are alive (expected ${expected})`;
    } catch (error) {
      return `the runtime could not be inspected (${describeHostError(error)})`;
    }
    if (this.#svc?.alive === false || this.#plain?.alive === false || (this.#entries && !entriesAlive(this.#entries)))
      return "the service realm is gone";
    return undefined;
  }

  #onPoll(): boolean {
    if (this.#building) return false;
    const now = performance.now();
    const slow = now - this.#lastPoll > SLOW_WINDOW_MS;
    this.#lastPoll = now;
    const ticks = slow ? 1 : FAST_TICKS;
    if (this.#svc) this.wasm.setCounter(this.#svc, ticks);
    if (this.userCtx?.alive) this.wasm.setCounter(this.userCtx, ticks);
    const stop = this.run?.shouldInterrupt() ?? false;
    runPollHook(stop);
    return stop;
  }

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

  /** Sets the runtime's memory and stack limits, skipping the WASM calls when they are unchanged. */
  setLimits(memoryBytes: number, stackBytes: number | undefined): void {
    if (memoryBytes !== this.#memoryLimit) this.rt.setMemoryLimit((this.#memoryLimit = memoryBytes));
    if (stackBytes !== undefined && stackBytes !== this.#stackLimit)
      this.rt.setMaxStackSize((this.#stackLimit = stackBytes));
  }

  /** Arms the short polling window for a context that is about to run guest code. */
  armCounter(ctx: QuickJSContext): void {
    this.#lastPoll = performance.now();
    this.wasm.setCounter(ctx, FAST_TICKS);
    if (this.#svc) this.wasm.setCounter(this.#svc, FAST_TICKS);
  }

  /** Bytes QuickJS has allocated in this runtime (all contexts). Costs one small object in the service realm. */
  memoryUsed(via: QuickJSContext | undefined = this.#svc ?? this.userCtx): number {
    // The answer is a new object in `via` whose own data property is read: no getter, no proxy, no
    // prototype of the guest's is consulted (a run's own context may be the one used).
    const ctx = via ?? this.svc;
    const ffi = this.wasm.quickjs.getFFI();
    const ptr = ffi.QTS_RuntimeComputeMemoryUsage(runtimePointer(this.rt) as never, contextPointer(ctx) as never);
    const handle = adoptValue(ctx, ptr);
    try {
      const used = ctx.getProp(handle, "memory_used_size");
      const n = ctx.getNumber(used);
      used.dispose();
      return n;
    } finally {
      handle.dispose();
    }
  }

  /** Runs the previous run's deferred cleanup, once. */
  settle(): void {
    const cleanup = this.pendingCleanup;
    this.pendingCleanup = undefined;
    if (cleanup && this.wasm.alive && !this.dead) cleanup();
  }

  /** Whether a context was prepared in idle time for the next run (for tests). */
  get spareReady(): boolean {
    return this.#spare !== undefined;
  }

  /**
   * A fresh user context: the one prepared in idle time, or a new one. Never one a run has used. Its
   * Math.random is seeded from the host's CSPRNG here, as it is handed out (not when it was made).
   */
  takeContext(): QuickJSContext {
    const spare = this.#spare;
    this.#spare = undefined;
    const ctx = spare ?? this.rt.newContext();
    this.wasm.seedRandom(ctx);
    // A lazy-service cell's baseline: the runtime with this fresh context in it, before any guest code.
    if (this.baselineBytes === 0) this.baselineBytes = this.memoryUsed(ctx);
    return ctx;
  }

  /** Creates the next run's context ahead of time, if this cell is idle and healthy. */
  prepareSpare(): void {
    if (this.#spare || this.inUse || this.pendingCleanup || this.dead || !this.wasm.alive || this.wasm.retired) return;
    try {
      // Unlimited while building it: the previous run's cap must not make context creation fail.
      this.setLimits(-1, undefined);
      this.#spare = this.rt.newContext();
    } catch (error) {
      this.wasm.poison(`preparing a context failed: ${describeHostError(error)}`);
    }
  }

  /** Frees the runtime. An abort here (quickjs-emscripten#257) poisons the module instead of escaping. */
  free(): void {
    if (this.dead || !this.wasm.alive) return;
    this.dead = true;
    try {
      this.#spare?.dispose();
      this.#spare = undefined;
      this.#freeNumbers();
      this.#plain?.dispose();
      if (this.#entries) for (const h of Object.values(this.#entries) as QuickJSHandle[]) h.dispose();
      this.#entries = undefined;
      this.#svc?.dispose();
      this.rt.dispose();
    } catch (error) {
      this.wasm.poison(`freeing a runtime failed: ${describeHostError(error)}`);
    }
  }
}

function entriesAlive(e: ServiceEntries): boolean {
  return e.serialize.alive && e.format.alive && e.errorInfo.alive && e.walk?.alive !== false;
}
