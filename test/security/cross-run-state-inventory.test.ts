// Threat: any piece of state one stateless run can change and the next run can see. This is the
// inventory for the QuickJS engine — every piece of mutable state a guest can reach in a reused runtime,
// where it lives, and how it is reset or why it cannot change — and the proof: after each kind of
// hostile run, the next run on the same warm cell sees exactly what a run on a fresh engine sees (the
// CANARY fingerprint), and the host finds the runtime clean (Cell.unclean()).
//
// | state                                   | lives in                         | reset / why it cannot change                 |
// |-----------------------------------------|----------------------------------|----------------------------------------------|
// | globals, intrinsics, prototypes         | the user context                 | a fresh context per run, never reused        |
// | host globals (console, timers, fs, …)   | the user context                 | installed fresh into each new context        |
// | FinalizationRegistry, InternalError     | the user context                 | removed before user code (GC callbacks;      |
// |                                         |                                  | genuine-error checks)                        |
// | promise job queue                       | the runtime                      | checked empty at release and at take,        |
// |                                         |                                  | else the runtime is retired                  |
// | contexts and handles of earlier runs    | the runtime / quickjs-emscripten | counted at release and take, else retired    |
// | Symbol.for registry, atoms, shapes      | the runtime                      | shared, but nothing a run can observe: a     |
// |                                         |                                  | registered symbol is indistinguishable from  |
// |                                         |                                  | a new one (checked: `registered`)            |
// | memory limit, stack limit               | the runtime                      | set by every run before its code starts      |
// | interrupt handler, polling window       | the cell                         | answers only to the attached run; re-armed   |
// | module loader                           | the runtime                      | refuses everything; refusals recorded per run|
// | service realm (serialiser, formatter)   | its own context in the runtime   | unreachable from user code: no object of it  |
// |                                         |                                  | is ever handed to a user context             |
// | timers, pending host calls, deliveries  | the host, per Run                | freed with the Run; late settlements dropped |
// | files                                   | the host, per Run (MemFs)        | a new MemFs per run from the request's files |
// | stdout / stderr                         | the host, per Run (OutputSink)   | a new sink per run                           |
// | WASM linear memory                      | the module                       | never readable by guest code (allocations    |
// |                                         |                                  | are initialised); a grown module is retired  |
// | thread priority (nice), thread pool     | the worker thread, kernel        | put back whenever the worker's loop turns,   |
// |                                         |                                  | which it does before each run begins; a      |
// |                                         |                                  | thread that cannot be put back is retired    |
// |                                         |                                  | (proof: test/security/cpu-starvation.test.ts)|
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CANARY, HOST_FUNCTIONS, HOSTILE, warmCell, type WarmCell } from "../helpers/quickjs.ts";

const idle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("quickjs: state inventory — every hostile run leaves a pristine runtime or none", () => {
  let warm: WarmCell;
  let pristine: unknown;
  before(async () => {
    const fresh = await warmCell();
    const r = await fresh.run(CANARY);
    assert.equal(r.ok, true, JSON.stringify(r));
    pristine = r.ok && r.value;
    await fresh.close();
    warm = await warmCell();
  });
  after(() => warm.close());

  it("the canary's own view is stable on one warm cell", async () => {
    const first = await warm.run(CANARY);
    const second = await warm.run(CANARY);
    assert.deepEqual(first.ok && first.value, pristine);
    assert.deepEqual(second.ok && second.value, pristine);
  });

  for (const hostile of HOSTILE) {
    it(`after a run that ${hostile.name}`, async () => {
      const cell = warm.cell();
      const r = await warm.run(hostile.code, {
        hostFunctions: HOST_FUNCTIONS,
        ...(hostile.limits ? { limits: hostile.limits } : {}),
      });
      assert.equal(r.ok ? "ok" : r.error.kind, hostile.outcome, JSON.stringify(!r.ok && r.error));
      if (hostile.retires) assert.equal(cell.dead, true, "the runtime was retired");
      else {
        assert.equal(warm.cell(), cell, "the same runtime serves the next run");
        await idle(); // the run's cleanup is deferred to idle time
        assert.equal(cell.unclean(), undefined);
      }
      const canary = await warm.run(CANARY);
      assert.equal(canary.ok, true, JSON.stringify(canary));
      assert.deepEqual(canary.ok && canary.value, pristine);
      assert.equal(canary.stdout, "");
      assert.deepEqual(canary.files, []);
      if (!hostile.retires) assert.equal(warm.cell(), cell, "and it is still the same runtime");
      await idle();
      assert.equal(warm.cell().unclean(), undefined);
    });
  }
});
