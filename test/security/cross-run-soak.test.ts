// Threat: state that leaks only sometimes — after an unusual sequence, or once a runtime has served many
// runs. 1,000 hostile runs of every kind in test/helpers/quickjs.ts (HOSTILE) on one warm engine,
// interleaved with a canary every 10 runs that must always see exactly what a fresh engine shows.
// Costly kinds (memory and stack limits) run less often so the soak takes seconds.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CANARY, HOST_FUNCTIONS, HOSTILE, warmCell, type WarmCell } from "../helpers/quickjs.ts";

const RUNS = 1000;
const EVERY: Record<string, number> = {
  "hits a small memory cap": 100,
  "overflows a small stack": 50,
  "spins past its deadline": 25,
};

describe("quickjs: soak — 1,000 hostile runs on one warm engine, a canary every 10", () => {
  let warm: WarmCell;
  let pristine: unknown;
  before(async () => {
    warm = await warmCell();
    const r = await warm.run(CANARY);
    assert.equal(r.ok, true, JSON.stringify(r));
    pristine = r.ok && r.value;
  });
  after(() => warm.close());

  it("every canary sees pristine state; every hostile run ends as it should", async (t) => {
    const cheap = HOSTILE.filter((h) => EVERY[h.name] === undefined);
    const start = performance.now();
    let canaries = 0;
    let retiringRuns = 0;
    for (let i = 1; i <= RUNS; i++) {
      const costly = HOSTILE.find((h) => EVERY[h.name] !== undefined && i % EVERY[h.name]! === 0);
      const hostile = costly ?? cheap[i % cheap.length]!;
      const r = await warm.run(hostile.code, {
        hostFunctions: HOST_FUNCTIONS,
        ...(hostile.limits ? { limits: hostile.limits } : {}),
      });
      assert.equal(r.ok ? "ok" : r.error.kind, hostile.outcome, `run ${i} (${hostile.name}): ${JSON.stringify(r)}`);
      if (hostile.retires) retiringRuns++;
      if (i % 10 === 0) {
        const canary = await warm.run(CANARY);
        assert.deepEqual(canary.ok && canary.value, pristine, `canary after run ${i} (${hostile.name})`);
        assert.equal(canary.stdout, "");
        canaries++;
      }
    }
    const module = warm.engine.pool.ready();
    t.diagnostic(
      `${RUNS} hostile runs + ${canaries} canaries in ${Math.round(performance.now() - start)} ms; ` +
        `${retiringRuns} runs retired their runtime by design, modules replaced: ${warm.engine.pool.replaced}, ` +
        `runtimes freed by the live module: ${module?.cellsRetired ?? "?"}`,
    );
    assert.equal(canaries, RUNS / 10);
    // Only the runs that must retire a runtime did: every other ending left it provably clean.
    assert.equal(module?.cellsRetired, retiringRuns);
  });
});
