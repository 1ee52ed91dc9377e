// The module pool: a warm module with a spare; poisoning (an emscripten abort such as
// quickjs-emscripten#257's `list_empty(&rt->gc_obj_list)` on dispose) swaps in the spare.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ModulePool, type WasmModule } from "../../../../src/engines/lib/quickjs/modules.ts";
import type { Limits } from "../../../../src/core/types.ts";
import { warmCell, type WarmCell } from "../../../helpers/quickjs.ts";

describe("quickjs modules", () => {
  it("finds and verifies QuickJS's interrupt counter in linear memory", async () => {
    const pool = new ModulePool();
    const host = await pool.get();
    assert.ok(host.counterOffset > 0, "the polling window can be shortened on this build");
    pool.close();
  });

  it("an abort while freeing a runtime poisons the module; the spare takes over", async () => {
    const pool = new ModulePool();
    const first = await pool.get();
    const cell = first.takeCell();
    // A handle left alive makes JS_FreeRuntime's leak assertion abort the module (as after an OOM).
    cell.svc.newObject();
    cell.free();
    assert.equal(first.alive, false);
    assert.match(first.poisonReason, /Assertion failed: list_empty/);
    assert.equal(pool.replaced, 1);
    const second = await pool.get();
    assert.notEqual(second, first);
    const fresh = second.takeCell();
    const ctx = fresh.rt.newContext();
    const r = ctx.evalCode("6 * 7", "t.js", 0);
    assert.equal(r.error, undefined);
    assert.equal(r.value && ctx.getNumber(r.value), 42);
    r.value?.dispose();
    ctx.dispose();
    fresh.free();
    assert.equal(second.alive, true);
    pool.close();
  });

  it("a retired module serves no new runs", async () => {
    const pool = new ModulePool();
    const first = await pool.get();
    first.retire();
    assert.equal(first.alive, true, "runs already on it may finish");
    assert.equal(pool.ready(), undefined);
    assert.notEqual(await pool.get(), first);
    pool.close();
  });
});

// A cell freed after a run (not reused) is replaced in idle time, so the next run does not build one.
// No timing is asserted: the engine's counters say where each cell was built. One setImmediate after
// the run is enough for the rebuild: the engine queued its own immediate when the run ended, before
// this test's, and immediates run in order.
describe("quickjs modules: a freed cell is rebuilt in idle time", () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  interface Killer {
    kind: string;
    code: string;
    limits: Partial<Limits>;
  }
  const TIMEOUT: Killer = { kind: "timeout", code: "while (true) {}", limits: { timeoutMs: 50 } };
  const MEMORY: Killer = {
    kind: "memory",
    code: "const a = []; for (;;) a.push(new Array(1e5).fill(1))",
    limits: { memoryMb: 8 },
  };

  /** A warm engine with one idle cell, and its live module. */
  async function warmModule(): Promise<{ warm: WarmCell; module: WasmModule }> {
    const warm = await warmCell();
    const module = warm.engine.pool.ready();
    assert.ok(module);
    return { warm, module };
  }

  async function kill(warm: WarmCell, killer: Killer = TIMEOUT): Promise<void> {
    const r = await warm.run(killer.code, { limits: killer.limits });
    assert.equal(!r.ok && r.error.kind, killer.kind, JSON.stringify(r));
  }

  /** The next run works, on another module than `module` (the spare took over). */
  async function servedBySpare(warm: WarmCell, module: WasmModule): Promise<void> {
    const next = await warm.run("1 + 1");
    assert.equal(next.ok && next.value, 2, JSON.stringify(next));
    assert.notEqual(warm.engine.pool.ready(), module);
    await warm.close();
  }

  for (const killer of [TIMEOUT, MEMORY]) {
    it(`after a ${killer.kind} failure the next run takes a new cell built in idle time`, async () => {
      const { warm, module } = await warmModule();
      const used = warm.cell();
      const onRunPath = module.cellsBuilt.onRunPath;
      await kill(warm, killer);
      assert.equal(used.dead, true, "the runtime was freed, not reused");
      assert.deepEqual(warm.idle(), [], "nothing is built before the result is delivered");
      await tick();
      const rebuilt = warm.cell();
      assert.notEqual(rebuilt, used, "a brand-new runtime");
      assert.notEqual(rebuilt.rt, used.rt);
      assert.equal(rebuilt.runs, 0);
      assert.equal(rebuilt.unclean(), undefined);
      assert.equal(module.cellsBuilt.inIdleTime, 1);
      const next = await warm.run("1 + 1");
      assert.equal(next.ok && next.value, 2, JSON.stringify(next));
      assert.equal(module.cellsBuilt.onRunPath, onRunPath, "the next run built no cell on its path");
      assert.equal(rebuilt.runs, 1, "the rebuilt cell served it");
      assert.equal(warm.cell(), rebuilt);
      assert.equal(module.cells.size, 1, "the warm count is what it was");
      await warm.close();
    });
  }

  it("a run that builds a cell on its own path before idle time replaces the freed one (no extra cell)", async () => {
    const { warm, module } = await warmModule();
    await kill(warm);
    const next = await warm.run("1 + 1"); // back to back: no macrotask in between
    assert.equal(next.ok && next.value, 2);
    await tick();
    assert.equal(module.cellsBuilt.inIdleTime, 0);
    assert.equal(warm.idle().length, 1);
    assert.equal(module.cells.size, 1);
    await warm.close();
  });

  const STOPPERS: { name: string; stop(module: WasmModule): void }[] = [
    { name: "poisoned", stop: (module) => module.poison("poisoned by the test") },
    { name: "retired", stop: (module) => module.retire() },
  ];
  for (const stopper of STOPPERS) {
    it(`nothing is rebuilt in a module ${stopper.name} before idle time`, async () => {
      const { warm, module } = await warmModule();
      await kill(warm);
      stopper.stop(module);
      await tick();
      assert.equal(module.cellsBuilt.inIdleTime, 0);
      assert.equal(module.cells.size, 0, "no cell was built in it");
      await servedBySpare(warm, module);
    });
  }

  it("nothing is rebuilt once the engine is closing, even while its last runs drain", async () => {
    const { warm, module } = await warmModule();
    // A run still in flight when close() is called keeps the engine draining past the rebuild's turn.
    const slow = warm.run("await new Promise((resolve) => setTimeout(resolve, 100)); 1");
    await kill(warm);
    const closing = warm.close();
    await tick();
    assert.equal(module.cellsBuilt.inIdleTime, 0, "nothing was built while the engine drained");
    const last = await slow;
    assert.equal(last.ok && last.value, 1, JSON.stringify(last));
    await tick();
    assert.ok(module.idle.length > 0, "the drained run's cell went back idle");
    for (const cell of module.idle)
      assert.equal(cell.spareReady, false, "no context was prepared for a run that will not come");
    await closing;
    await tick();
    assert.equal(module.cellsBuilt.inIdleTime, 0);
  });

  it("a failure while building in idle time poisons the module and escapes no timer", async () => {
    const { warm, module } = await warmModule();
    await kill(warm);
    (module.quickjs as unknown as { newRuntime: () => never }).newRuntime = () => {
      throw new Error("no runtime for you");
    };
    await tick();
    assert.equal(module.alive, false);
    assert.match(module.poisonReason, /building a runtime in idle time failed: .*no runtime for you/);
    await servedBySpare(warm, module);
  });
});
