// The reaches into quickjs-emscripten's private state (src/engines/lib/quickjs/internals.ts), each exercised
// against the installed version: if an upgrade moves a shape, this fails before anything relies on it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  adoptValue,
  contextPointer,
  EVAL_FLAGS,
  runtimePointer,
  trackedContexts,
} from "../../../../src/engines/lib/quickjs/internals.ts";
import { ModulePool } from "../../../../src/engines/lib/quickjs/modules.ts";

describe("quickjs internals (pinned to quickjs-emscripten 0.32)", () => {
  it("pointers, adopted values, tracked contexts, eval flags and the interrupt counter all still work", async () => {
    const pool = new ModulePool();
    const wasm = await pool.get();
    assert.ok(wasm.counterOffset > 0, "interrupt_counter was found and verified");
    assert.ok(wasm.randomOffset > 0 && wasm.randomOffset % 8 === 0, "random_state was found and verified");
    const cell = wasm.takeCell();
    // The same seed written twice draws the same number; seedRandom draws a new one.
    const draw = (ctx: ReturnType<typeof cell.takeContext>) => {
      const handle = ctx.unwrapResult(ctx.evalCode("Math.random()"));
      const n = ctx.getNumber(handle);
      handle.dispose();
      return n;
    };
    const seeded = cell.takeContext();
    const heap = () => new Int32Array(wasm.memory.buffer);
    const at = (contextPointer(seeded) + wasm.randomOffset) >> 2;
    heap().set([7, 9], at);
    const first = draw(seeded);
    heap().set([7, 9], at);
    assert.equal(draw(seeded), first);
    wasm.seedRandom(seeded);
    assert.notEqual(draw(seeded), first);
    seeded.dispose();
    const { rt, svc } = cell;
    assert.ok(contextPointer(svc) > 0 && runtimePointer(rt) > 0);
    assert.ok(cell.memoryUsed() > 0, "adoptValue wraps QTS_RuntimeComputeMemoryUsage's object");
    assert.equal(typeof adoptValue, "function");

    assert.equal(trackedContexts(rt), 1);
    const ctx = rt.newContext();
    assert.equal(trackedContexts(rt), 2);

    const compiled = ctx.evalCode("export default 1", "m.js", EVAL_FLAGS.module | EVAL_FLAGS.compileOnly);
    assert.equal(compiled.error, undefined, "module + compile-only compiles a module without running it");
    compiled.value?.dispose();
    const script = ctx.evalCode("export default 1", "s.js", EVAL_FLAGS.compileOnly);
    assert.notEqual(script.error, undefined, "the same text is not a script");
    script.error?.dispose();
    const later = ctx.evalCode("await 1", "a.js", EVAL_FLAGS.async);
    const promise = later.error ?? later.value;
    assert.equal(later.error, undefined);
    assert.equal(ctx.typeof(promise), "object", "async eval yields a promise");
    promise.dispose();
    rt.executePendingJobs();

    ctx.dispose();
    assert.equal(trackedContexts(rt), 1);
    wasm.releaseCell(cell, false);
    pool.close();
  });
});
