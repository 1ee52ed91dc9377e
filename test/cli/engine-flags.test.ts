// The pool flags `wasmcell mcp` and `wasmcell worker` share, as the sandbox options they become.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { javascriptFromFlags, pythonFromFlags } from "../../src/cli/engine-flags.ts";

describe("engine flags", () => {
  it("--python-pool and --python-standby become python.pool and python.standby", () => {
    assert.deepEqual(pythonFromFlags({}), { pool: 1 });
    assert.deepEqual(pythonFromFlags({ "python-pool": "3", "python-standby": "1" }), { pool: 3, standby: 1 });
    assert.deepEqual(pythonFromFlags({ "python-standby": "0" }), { pool: 1 });
    assert.throws(() => pythonFromFlags({ "python-pool": "two" }), /--python-pool must be a positive whole number/);
    assert.throws(() => pythonFromFlags({ "python-standby": "9" }), /--python-standby must be at most 8, got 9/);
  });

  it("--js-workers and --js-max-workers: one run per thread, max at least workers", () => {
    assert.deepEqual(javascriptFromFlags({ "js-workers": "2" }), { workers: 2, runsPerWorker: 1 });
    assert.throws(
      () => javascriptFromFlags({ "js-workers": "4", "js-max-workers": "2" }),
      /must be at least --js-workers/,
    );
  });
});
