// A warm QuickJS engine for cross-run security tests: one module, one cell serving run after run (the
// in-process equivalent of `pool: 1`), with a way to see which cell served a run so a test can prove the
// cell really was reused, or really was retired.
import assert from "node:assert/strict";
import { QuickJSEngine } from "../../src/engines/quickjs/index.ts";
import type { Cell } from "../../src/engines/quickjs/cell.ts";
import { resolveOptions, resolveRequest } from "../../src/options.ts";
import type { Limits, RunRequest, RunResult } from "../../src/types.ts";

export interface WarmCell {
  engine: QuickJSEngine;
  run(code: string, extra?: Partial<RunRequest>): Promise<RunResult>;
  /** The one idle cell the next run will take (asserts there is exactly one). */
  cell(): Cell;
  /** The idle cells of the live module (none right after a cell was retired). */
  idle(): Cell[];
  close(): Promise<void>;
}

export async function warmCell(limits: Partial<Limits> = {}): Promise<WarmCell> {
  const engine = new QuickJSEngine();
  await engine.warm();
  const options = resolveOptions({ limits: { timeoutMs: 2000, ...limits } });
  const run = (code: string, extra: Partial<RunRequest> = {}) =>
    engine.run(resolveRequest({ language: "javascript", code, ...extra }, options));
  const cell = (): Cell => {
    const module = engine.pool.ready();
    assert.ok(module, "the engine has a live module");
    assert.equal(module.idle.length, 1, "exactly one warm cell");
    return module.idle[0] as Cell;
  };
  // The first run creates the cell; from here on every run takes it from the pool.
  const first = await run("0");
  assert.equal(first.ok, true);
  const idle = (): Cell[] => [...(engine.pool.ready()?.idle ?? [])];
  return { engine, run, cell, idle, close: () => engine.close() };
}
