// The module pool: a warm module with a spare; poisoning (an emscripten abort such as
// quickjs-emscripten#257's `list_empty(&rt->gc_obj_list)` on dispose) swaps in the spare.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ModulePool } from "../../../src/engines/quickjs/modules.ts";

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
