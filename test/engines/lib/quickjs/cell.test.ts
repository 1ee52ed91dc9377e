// A stateless run's cell evaluates only the service realm's core when it is built; the rest of the
// service is evaluated the first time a run of that cell needs it, outside the run's limits.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Cell } from "../../../../src/engines/lib/quickjs/cell.ts";
import { ModulePool } from "../../../../src/engines/lib/quickjs/modules.ts";
import { warmCell, type WarmCell } from "../../../helpers/quickjs.ts";

describe("quickjs cell: the service realm's core first, the rest on first need", () => {
  let warm: WarmCell;
  before(async () => {
    warm = await warmCell({ memoryMb: 4 });
  });
  after(() => warm.close());

  it("plain results and a host call's plain arguments need only the core", async () => {
    const r = await warm.run("const r = await wait(1, 'a', [true, null], { b: 2 }); [r, { c: 'd' }]", {
      hostFunctions: { wait: (args) => Promise.resolve(args.length) },
    });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, [4, { c: "d" }]);
    assert.equal(warm.cell().serviceEvaluated, false);
  });

  it("a value the core refuses is walked by the rest, its getters run twice (as before), not three times", async () => {
    const r = await warm.run("({ get a() { console.log('get'); return 1n; }, u: undefined, d: new Date(0) })");
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, { a: 1n, u: undefined, d: new Date(0) });
    assert.equal(r.stdout, "get\nget\n");
    assert.equal(warm.cell().serviceEvaluated, true);
  });
});

describe("quickjs cell: the rest of the service is evaluated outside the run's limits", () => {
  const fresh = async () => {
    const pool = new ModulePool();
    const module = await pool.get();
    const cell = module.takeCell();
    assert.equal(cell.serviceEvaluated, false);
    const done = () => {
      cell.run = undefined;
      cell.free();
      pool.close();
    };
    return { module, cell, svc: cell.svc, done };
  };
  const log = (cell: Cell, text: string) => {
    const arg = cell.svc.newString(text);
    const r = cell.format(undefined, [arg]);
    arg.dispose();
    const out = r.error ? undefined : cell.svc.getString(r.value);
    (r.error ?? r.value).dispose();
    return out;
  };

  it("with the memory cap lifted, then put back", async () => {
    const { cell, svc, done } = await fresh();
    // A run whose allocator is at its cap calls console.log: the service is evaluated all the same,
    // and the call itself then meets the cap (it cannot allocate its answer).
    cell.setLimits(1, undefined);
    assert.equal(log(cell, "x"), undefined);
    assert.equal(cell.serviceEvaluated, true);
    const after = svc.evalCode("[1, 2, 3]", "t.js", 0);
    if (!after.error) after.value.dispose();
    assert.ok(after.error, "the run's cap holds again");
    after.error.dispose();
    cell.setLimits(-1, undefined);
    assert.equal(log(cell, "y"), "y");
    done();
  });

  it("with the interrupt held off, then answering for the run again", async () => {
    const { module, cell, svc, done } = await fresh();
    // A run past its deadline, polled at every tick, calls console.log.
    let polls = 0;
    cell.run = { shouldInterrupt: () => (polls++, true), wake: () => undefined, refuseImport: (name) => name };
    module.setCounter(svc, 1);
    assert.equal(log(cell, "x"), "x");
    assert.equal(cell.serviceEvaluated, true);
    assert.equal(polls, 0);
    module.setCounter(svc, 1);
    const spin = svc.evalCode("for (;;);", "t.js", 0);
    if (!spin.error) spin.value.dispose();
    assert.ok(spin.error, "the interrupt ends this");
    spin.error.dispose();
    assert.ok(polls > 0);
    done();
  });
});
