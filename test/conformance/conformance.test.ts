// The fast conformance sample `npm test` runs (the full suites are `npm run conformance`): a slice of
// every selected WPT family inside the box (thread pool and in-process), a slice of the test262
// subset through wasmcell's path against the bare engine's baseline, and two or three CPython test
// modules on each Python tier. Each asserts that nothing fails that no expectations file lists with a reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { summarize } from "./report.ts";
import { FAMILIES, runWpt } from "./wpt.ts";
import { runTest262 } from "./test262.ts";
import { runCpython } from "./cpython.ts";
import { suiteRoot, type SuiteName } from "./sources.ts";

/** A suite whose upstream files are not on this machine is skipped, saying what would provide them. */
const needs = (suite: SuiteName): { skip?: string } => {
  const r = suiteRoot(suite);
  return "missing" in r ? { skip: r.missing } : {};
};

function unexpected(rows: ReturnType<typeof summarize>[]): string[] {
  return rows.flatMap((r) => r.unexpected.map((f) => `${r.suite}: ${f.file} :: ${f.name} :: ${f.failure}`));
}

describe("conformance sample: no failure the expectations files do not list", () => {
  it("web-platform-tests, every family, in the box", needs("wpt"), async () => {
    const rows = (await runWpt({ families: Object.keys(FAMILIES).filter((f) => f !== "url"), sample: 2 })).map(
      summarize,
    );
    assert.deepEqual(unexpected(rows), []);
    assert.ok(rows.every((r) => r.passed > 0));
  });

  it("web-platform-tests url (the data-driven files)", needs("wpt"), async () => {
    const rows = (await runWpt({ families: ["url"], sample: 3 })).map(summarize);
    assert.deepEqual(unexpected(rows), []);
  });

  it("test262 through wasmcell's path fails only where the bare engine does", needs("test262"), async () => {
    const rows = (await runTest262({ sample: 12 })).map(summarize);
    assert.deepEqual(unexpected(rows), []);
    assert.ok(rows[0]!.passed > 200);
  });

  // CI installs Debian's libpython3.11-testsuite (.ci/run): these always run there. Pyodide runs the
  // same 3.11 files unless WASMCELL_CPYTHON_TESTS_PYODIDE names its own (CI fetches 3.14's). Native
  // also runs test_json, a package with a submodule per area (about 2 s there).
  const sample: Record<string, string[]> = {
    native: ["test_bisect", "test_heapq", "test_json"],
    pyodide: ["test_bisect", "test_heapq"],
  };
  for (const [tier, only] of Object.entries(sample)) {
    it(`CPython's own tests on the ${tier} tier`, needs("cpython"), async () => {
      const rows = (await runCpython({ tiers: [tier], only })).map(summarize);
      assert.deepEqual(unexpected(rows), []);
      assert.ok(rows[0]!.passed > 50);
    });
  }
});
