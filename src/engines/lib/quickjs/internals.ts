// Every reach into quickjs-emscripten's private state, in one file.
//
// PINNED: written against quickjs-emscripten-core 0.32 and @jitl/quickjs-wasmfile-release-sync 0.32.
// None of this is public API: re-check each function below on every upgrade of either package
// (test/engines/lib/quickjs/internals.test.ts exercises each one and fails loudly if a shape moved).
// Public API is used everywhere else; what is here is here because the public API has no way to do it.

import {
  Lifetime,
  QuickJSRuntime,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";

/** QuickJS's JS_Eval flags (quickjs.h), passed through evalCode's numeric flags unchanged. */
export const EVAL_FLAGS = { module: 1 << 0, compileOnly: 1 << 5, async: 1 << 7 } as const;

/** The JSContext* of a context (`QuickJSContext.ctx`, a protected Lifetime). The FFI needs it. */
export function contextPointer(ctx: QuickJSContext): number {
  return (ctx as unknown as { ctx: { value: number } }).ctx.value;
}

/** The JSRuntime* of a runtime (`QuickJSRuntime.rt`, a protected Lifetime). */
export function runtimePointer(rt: QuickJSRuntime): number {
  return (rt as unknown as { rt: { value: number } }).rt.value;
}

/**
 * Wraps a JSValue* the FFI returned as a handle owned by `ctx` (`QuickJSContext.memory.heapValueHandle`),
 * so it is freed like any other handle.
 */
export function adoptValue(ctx: QuickJSContext, pointer: number): QuickJSHandle {
  return (ctx as unknown as { memory: { heapValueHandle(p: number): QuickJSHandle } }).memory.heapValueHandle(pointer);
}

/**
 * How many contexts of this runtime quickjs-emscripten still tracks (`QuickJSRuntime.contextMap`): a
 * context enters it on newContext and leaves it on dispose.
 */
export function trackedContexts(rt: QuickJSRuntime): number {
  const map = (rt as unknown as { contextMap?: Map<unknown, unknown> }).contextMap;
  if (!(map instanceof Map)) throw new Error("wasmcell: quickjs-emscripten's runtime no longer has a contextMap");
  return map.size;
}

/** The initial value of `JSContext.interrupt_counter` (JS_INTERRUPT_COUNTER_INIT in quickjs.c). */
const QUICKJS_COUNTER_INIT = 10_000;

/**
 * Finds `interrupt_counter` inside JSContext: the int that drops by exactly the tick count of a known
 * loop, and that, when written, changes how soon the interrupt handler is polled. Returns its byte
 * offset, or -1 when no candidate passes both checks (the engine then keeps QuickJS's own polling).
 */
export function findInterruptCounter(rt: QuickJSRuntime, heap: () => Int32Array): number {
  const ctx = rt.newContext();
  let polls = 0;
  rt.setInterruptHandler(() => {
    polls++;
    return false;
  });
  try {
    const base = contextPointer(ctx) >> 2;
    const run = (code: string) => {
      const r = ctx.evalCode(code, "calibrate.js", 0);
      (r.error ?? r.value).dispose();
    };
    const snapshot = () => Array.from({ length: 256 }, (_, i) => heap()[base + i] ?? 0);
    run("0");
    const before = snapshot();
    run("for (let i = 0; i < 100; i++) {}");
    const after = snapshot();
    const candidates: number[] = [];
    before.forEach((v, i) => {
      const a = after[i] ?? 0;
      if (v > a && v - a < 1000 && v <= QUICKJS_COUNTER_INIT) candidates.push(i);
    });
    for (const index of candidates) {
      // Writing 1 must make the next loop poll about once per tick.
      const saved = heap()[base + index] ?? 0;
      heap()[base + index] = 1;
      polls = 0;
      rt.setInterruptHandler(() => {
        polls++;
        heap()[base + index] = 1;
        return false;
      });
      run("for (let i = 0; i < 50; i++) {}");
      if (polls >= 50) return index * 4;
      heap()[base + index] = saved;
    }
    return -1;
  } finally {
    rt.removeInterruptHandler();
    ctx.dispose();
  }
}

/**
 * Finds `random_state` inside JSContext: the 64-bit word Math.random steps (xorshift64*, seeded by
 * QuickJS from gettimeofday when the context is made). Found by what it does, not by a struct offset:
 * among the words one Math.random() call changes, the one that, written twice with the same value, makes
 * Math.random() answer the same twice, and with another value something else. Returns its byte offset
 * (8-aligned, from the JSContext pointer), or -1 when no candidate passes.
 *
 * Why it matters: the clock QuickJS seeds from has millisecond steps here, so contexts made in the same
 * millisecond (two tenants' stateless runs, or a session's forks and resumes, which copy the state)
 * would draw the same "random" numbers. Every context is reseeded from the host's CSPRNG instead
 * (WasmModule.seedRandom).
 */
export function findRandomState(rt: QuickJSRuntime, heap: () => Int32Array): number {
  const ctx = rt.newContext();
  try {
    const base = contextPointer(ctx) >> 2;
    const random = (): number => {
      const r = ctx.evalCode("Math.random()", "calibrate.js", 0);
      if (r.error) {
        r.error.dispose();
        return Number.NaN;
      }
      const n = ctx.getNumber(r.value);
      r.value.dispose();
      return n;
    };
    const words = 512;
    const snapshot = () => heap().slice(base, base + words);
    random();
    const before = snapshot();
    random();
    const after = snapshot();
    const write = (index: number, lo: number, hi: number) => {
      heap()[base + index] = lo;
      heap()[base + index + 1] = hi;
    };
    for (let i = 0; i + 1 < words; i += 2) {
      if (before[i] === after[i] && before[i + 1] === after[i + 1]) continue;
      const saved = [heap()[base + i] ?? 0, heap()[base + i + 1] ?? 0] as const;
      write(i, 0x2545f491, 0x4f6cdd1d);
      const a = random();
      write(i, 0x2545f491, 0x4f6cdd1d);
      const b = random();
      write(i, 0x1234567, 0x7654321);
      const c = random();
      if (a === b && a !== c && Number.isFinite(a) && Number.isFinite(c)) return i * 4;
      write(i, saved[0], saved[1]);
    }
    return -1;
  } finally {
    ctx.dispose();
  }
}

// --- Session snapshots (snapshot.ts): wrappers rebuilt around a restored linear memory -------------
// A restored QuickJS state is a linear memory whose JSRuntime, JSContexts and JSValues already exist;
// quickjs-emscripten has to be given JS-side wrappers for them without allocating new ones in C. Its
// runtime constructor takes an existing `rt` Lifetime (that is how QuickJSWASMModule.newRuntime builds
// one), and `newContext({ contextPointer })` wraps an existing JSContext (a documented option). A
// JSValue* becomes a handle through the context's own `heapValueHandle`, as adoptValue does. Host
// functions are entries of the runtime's HostRefMap, keyed by the id the C function object holds.

/** What a restore needs of the wasm module wrapper (QuickJSWASMModule's protected fields). */
interface ModuleParts {
  module: { _malloc(n: number): number; _free(p: number): void };
  ffi: { QTS_FreeRuntime(rt: number): void };
  callbacks: { deleteRuntime(rt: number): void };
}

function moduleParts(quickjs: QuickJSWASMModule): ModuleParts {
  const parts = quickjs as unknown as Partial<ModuleParts>;
  if (!parts.module || !parts.ffi || !parts.callbacks || typeof parts.module._malloc !== "function")
    throw new Error("wasmcell: quickjs-emscripten's module no longer has module, ffi and callbacks");
  return parts as ModuleParts;
}

/**
 * A QuickJSRuntime wrapping the JSRuntime at `pointer` (already in linear memory), built as
 * QuickJSWASMModule.newRuntime builds one: the same constructor, a Lifetime that frees the runtime and
 * then forgets its callbacks.
 */
export function wrapRuntime(quickjs: QuickJSWASMModule, pointer: number): QuickJSRuntime {
  const { module, ffi, callbacks } = moduleParts(quickjs);
  const rt = new Lifetime(pointer, undefined, (p: number) => {
    ffi.QTS_FreeRuntime(p);
    callbacks.deleteRuntime(p);
  });
  const Runtime = QuickJSRuntime as unknown as new (args: object) => QuickJSRuntime;
  return new Runtime({ module, ffi, callbacks, rt });
}

/** A QuickJSContext wrapping the JSContext at `pointer` of `rt` (the public `contextPointer` option). */
export function wrapContext(rt: QuickJSRuntime, pointer: number): QuickJSContext {
  return rt.newContext({ contextPointer: pointer as never });
}

/**
 * Grows linear memory to at least `bytes` the way QuickJS itself does (malloc → sbrk → memory.grow).
 * One block the size of the shortfall is not enough: malloc first uses the free space at the top of
 * the heap, so the memory grows by the shortfall less that space (a session of 100 MB failed to
 * restore into a fresh module that way). Blocks are taken until the memory is large enough, then freed.
 */
export function growMemory(quickjs: QuickJSWASMModule, memory: { readonly buffer: ArrayBuffer }, bytes: number): void {
  const { module } = moduleParts(quickjs);
  const held: number[] = [];
  try {
    for (let i = 0; i < 8 && memory.buffer.byteLength < bytes; i++) {
      const p = module._malloc(bytes - memory.buffer.byteLength + 1024 * 1024);
      if (p === 0) throw new Error(`wasmcell: linear memory could not grow to ${bytes} bytes`);
      held.push(p);
    }
  } finally {
    for (const p of held) module._free(p);
  }
  if (memory.buffer.byteLength < bytes) throw new Error(`wasmcell: linear memory did not grow to ${bytes} bytes`);
}

/** The runtime's host references (`QuickJSRuntime.hostRefs`, a HostRefMap), as entries and its counters. */
interface HostRefFields {
  nextId: number;
  freelist: number[];
  groups: Map<number, Map<number, object>>;
}

function hostRefFields(rt: QuickJSRuntime): HostRefFields {
  const map = (rt as unknown as { hostRefs?: Partial<HostRefFields> }).hostRefs;
  if (!map || typeof map.nextId !== "number" || !Array.isArray(map.freelist) || !(map.groups instanceof Map))
    throw new Error("wasmcell: quickjs-emscripten's runtime no longer has a HostRefMap of nextId, freelist, groups");
  return map as HostRefFields;
}

/** Every live host reference of `rt` (id → value), with the map's next id and free list. */
export function readHostRefs(rt: QuickJSRuntime): { refs: Map<number, object>; nextId: number; freelist: number[] } {
  const f = hostRefFields(rt);
  const refs = new Map<number, object>();
  for (const group of f.groups.values()) for (const [id, value] of group) refs.set(id, value);
  return { refs, nextId: f.nextId, freelist: [...f.freelist] };
}

/** Puts host references back at the ids the C objects in memory hold (HostRefMap groups ids by id >> 8). */
export function writeHostRefs(rt: QuickJSRuntime, refs: Map<number, object>, nextId: number, freelist: number[]): void {
  const f = hostRefFields(rt);
  if (f.groups.size !== 0) throw new Error("wasmcell: the restored runtime already has host references");
  for (const [id, value] of refs) {
    const g = id >> 8;
    let group = f.groups.get(g);
    if (!group) f.groups.set(g, (group = new Map<number, object>()));
    group.set(id, value);
  }
  f.nextId = nextId;
  f.freelist = [...freelist];
}
