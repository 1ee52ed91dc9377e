// A stateless run's cell evaluates only the service realm's core when it is built; the rest of the
// service is evaluated the first time a run of that cell needs it, outside the run's limits.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { Cell } from "../../../../src/engines/lib/quickjs/cell.ts";
import { ModulePool } from "../../../../src/engines/lib/quickjs/modules.ts";
import { warmCell, type WarmCell } from "../../../helpers/quickjs.ts";

describe("quickjs cell: the service realm's core first, the rest on first need", () => {
  let warm: WarmCell;
  before(async () => {
    warm = await warmCell({ memoryMb: 4 });
  });
  after(() => warm.close());

  it("a primitive result and a host call with primitive arguments need no service realm", async () => {
    const r = await warm.run("const r = await wait(1, true, null); r + 1", {
      hostFunctions: { wait: (args) => Promise.resolve(args.length) },
    });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.equal(r.ok && r.value, 4);
    assert.deepEqual(warm.cell().serviceBuilt, { context: false, core: false, all: false });
  });

  it("plain results and a host call's plain arguments need only the core", async () => {
    const r = await warm.run("const r = await wait(1, 'a', [true, null], { b: 2 }); [r, { c: 'd' }]", {
      hostFunctions: { wait: (args) => Promise.resolve(args.length) },
    });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, [4, { c: "d" }]);
    assert.deepEqual(warm.cell().serviceBuilt, { context: true, core: true, all: false });
  });

  it("a value the core refuses is walked by the rest, its getters run twice (as before), not three times", async () => {
    const r = await warm.run("({ get a() { console.log('get'); return 1n; }, u: undefined, d: new Date(0) })");
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, { a: 1n, u: undefined, d: new Date(0) });
    assert.equal(r.stdout, "get\nget\n");
    assert.equal(warm.cell().serviceBuilt.all, true);
  });
});

describe("quickjs cell: the service realm is built outside the run's limits", () => {
  const fresh = async () => {
    const pool = new ModulePool();
    const module = await pool.get();
    const cell = module.takeCell();
    const ctx = cell.takeContext();
    assert.deepEqual(cell.serviceBuilt, { context: false, core: false, all: false });
    const text = ctx.newString("x");
    const done = () => {
      cell.run = undefined;
      text.dispose();
      ctx.dispose();
      cell.free();
      pool.close();
    };
    return { module, cell, ctx, text, done };
  };
  /** console.log's formatting of `arg`, or undefined when it threw. */
  const log = (cell: Cell, arg: QuickJSHandle) => {
    const r = cell.format(undefined, [arg]);
    const out = r.error ? undefined : cell.svc.getString(r.value);
    (r.error ?? r.value).dispose();
    return out;
  };

  it("with the memory cap lifted, then put back", async () => {
    const { cell, ctx, text, done } = await fresh();
    const obj = ctx.newObject();
    // A run whose allocator is at its cap returns an object: the service realm's context and core are
    // built all the same (the core's own call then meets the cap and hands the value to the rest,
    // built all the same too, whose call meets the cap).
    cell.userCtx = ctx;
    const baseline = cell.baselineBytes;
    cell.setLimits(1, undefined);
    const r = cell.serialize(obj, 1000);
    (r.error ?? r.value).dispose();
    obj.dispose();
    assert.deepEqual(cell.serviceBuilt, { context: true, core: true, all: true });
    assert.ok(cell.baselineBytes > baseline, `what the service took joins the baseline (${cell.baselineBytes})`);
    assert.equal(log(cell, text), undefined, "console.log itself meets the cap");
    const after = cell.svc.evalCode("[1, 2, 3]", "t.js", 0);
    if (!after.error) after.value.dispose();
    assert.ok(after.error, "the run's cap holds again");
    after.error.dispose();
    cell.setLimits(-1, undefined);
    assert.equal(log(cell, text), "x");
    cell.userCtx = undefined;
    done();
  });

  it("with the interrupt held off, then answering for the run again", async () => {
    const { module, cell, ctx, text, done } = await fresh();
    // A run past its deadline, polled at every tick, calls console.log.
    let polls = 0;
    cell.run = { shouldInterrupt: () => (polls++, true), wake: () => undefined, refuseImport: (name) => name };
    cell.userCtx = ctx;
    module.setCounter(ctx, 1);
    module.setCounter(cell.svc, 1);
    assert.equal(log(cell, text), "x");
    assert.equal(cell.serviceBuilt.all, true);
    assert.equal(polls, 0);
    module.setCounter(cell.svc, 1);
    const spin = cell.svc.evalCode("for (;;);", "t.js", 0);
    if (!spin.error) spin.value.dispose();
    assert.ok(spin.error, "the interrupt ends this");
    spin.error.dispose();
    assert.ok(polls > 0);
    cell.userCtx = undefined;
    done();
  });
});
