// Where the conformance suites' upstream files are read from. They are not in this repository: the
// project's own rules keep third-party test code out of its commits. What is committed is which files
// run (selection/*.txt, paths relative to each suite's root, at the upstream commits docs/conformance.md
// names) and what is expected of them (expectations/).
//
// - CPython: Debian's libpython3.11-testsuite (`apt-get install libpython3.11-testsuite`, which
//   .ci/run does), /usr/lib/python3.11/test, or WASMCELL_CPYTHON_TESTS. The Pyodide tier runs the
//   same files unless WASMCELL_CPYTHON_TESTS_PYODIDE names a matching Lib/test (cpython.ts).
// - web-platform-tests: a checkout of web-platform-tests/wpt named by WASMCELL_WPT_DIR.
// - test262: a checkout of tc39/test262 named by WASMCELL_TEST262_DIR.
// A suite whose root is missing is reported as not available, never as passed.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const here = dirname(new URL(import.meta.url).pathname);

export type SuiteName = "wpt" | "test262" | "cpython";

const ROOTS: Record<SuiteName, { env: string; fallback?: string; how: string }> = {
  cpython: {
    env: "WASMCELL_CPYTHON_TESTS",
    fallback: "/usr/lib/python3.11/test",
    how: "apt-get install libpython3.11-testsuite (or set WASMCELL_CPYTHON_TESTS)",
  },
  wpt: { env: "WASMCELL_WPT_DIR", how: "set WASMCELL_WPT_DIR to a web-platform-tests/wpt checkout" },
  test262: { env: "WASMCELL_TEST262_DIR", how: "set WASMCELL_TEST262_DIR to a tc39/test262 checkout" },
};

/** The suite's root directory, or undefined (with what would provide it) when it is not here. */
export function suiteRoot(suite: SuiteName): { root: string } | { missing: string } {
  const r = ROOTS[suite];
  const root = process.env[r.env] || r.fallback;
  if (root && existsSync(root)) return { root };
  return { missing: `${suite} is not available here: ${r.how}` };
}

/** The files of the suite that run, relative to its root, in order. */
export function selection(suite: SuiteName): string[] {
  return readFileSync(join(here, "selection", `${suite}.txt`), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The suite's root, or a thrown error naming what is missing. */
export function requireRoot(suite: SuiteName): string {
  const r = suiteRoot(suite);
  if ("missing" in r) throw new Error(r.missing);
  return r.root;
}
