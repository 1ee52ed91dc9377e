// Threat: isolation that holds for one hostile run but wears down over many (a counter that drifts, a
// buffer that grows, a reset that misses a rare path). 1,000 hostile runs of mixed kinds on one warm
// sidecar (pool 1), with a canary run every tenth that must see exactly the pristine state, and every
// hostile run's outcome checked exactly. The retire count and the reset cost are reported.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import type { Limits, RunResult } from "../../src/core/types.ts";
import { PY_HOSTILE as HOSTILE, STATE_PROBE, warmPyodide } from "../helpers/pyodide-state.ts";

const RUNS = 1000;
const CANARY_EVERY = 10;

function outcome(r: RunResult): string {
  return r.ok ? "ok" : `${r.error.kind} ${r.error.name}`;
}

describe("pyodide: 1,000 hostile runs on one warm sidecar, a canary every tenth", () => {
  let engine: PyodideEngine;
  let run: (code: string, more?: Partial<Limits>) => Promise<RunResult>;
  let pristine: unknown;
  before(async () => {
    ({ engine, run } = await warmPyodide());
    const first = await run(STATE_PROBE);
    assert.ok(first.ok);
    pristine = first.value;
  });
  after(() => engine.close());

  it("every canary sees the pristine state and every hostile run ends exactly as expected", async (t) => {
    const started = performance.now();
    for (let i = 0; i < RUNS; i++) {
      const [code, limits, expected] = HOSTILE[i % HOSTILE.length]!;
      const r = await run(code, limits);
      assert.equal(outcome(r), expected, `run ${i}: ${JSON.stringify(!r.ok && r.error).slice(0, 300)}`);
      if (!r.ok) assert.ok(r.error.message.length < 10_000, "error fields are capped");
      if (i % CANARY_EVERY === CANARY_EVERY - 1) {
        const canary = await run(STATE_PROBE);
        assert.ok(canary.ok, JSON.stringify(!canary.ok && canary.error));
        assert.deepEqual(canary.value, pristine, `the canary after run ${i} saw a changed state`);
      }
    }
    const { proven, retired, totalMs, maxMs } = engine.resets;
    t.diagnostic(
      `${RUNS} hostile + ${RUNS / CANARY_EVERY} canary runs in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `resets proven ${proven}, retired ${retired} (${((100 * retired) / (proven + retired)).toFixed(1)} %), ` +
        `reset mean ${(totalMs / Math.max(1, proven)).toFixed(2)} ms, max ${maxMs.toFixed(1)} ms`,
    );
  });
});
