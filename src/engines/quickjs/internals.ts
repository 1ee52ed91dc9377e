// Every reach into quickjs-emscripten's private state, in one file.
//
// PINNED: written against quickjs-emscripten-core 0.32 and @jitl/quickjs-wasmfile-release-sync 0.32.
// None of this is public API: re-check each function below on every upgrade of either package
// (test/engines/quickjs/internals.test.ts exercises each one and fails loudly if a shape moved).
// Public API is used everywhere else; what is here is here because the public API has no way to do it.

import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";

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
