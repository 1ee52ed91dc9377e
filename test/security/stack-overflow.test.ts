// Threat: guest code recurses (or nests) until a stack overflows — Python's, the WASM stack, or the
// host's native stack — to crash the engine or the host.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("pyodide", () => {
  after(closePyodide);

  it("unbounded recursion is kind stack (RecursionError); the next run is served", async () => {
    const r = await runPy("def f(n):\n    return f(n + 1)\nf(0)");
    assert.equal(!r.ok && r.error.kind, "stack");
    assert.equal(!r.ok && r.error.name, "RecursionError");
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });

  it("raising the recursion limit does not let recursion overflow the WASM stack into a crash of the host", async () => {
    const r = await runPy("import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)");
    assert.equal(r.ok, false);
    // Python frames live on the WASM heap: with the limit lifted, the heap cap is usually hit first.
    assert.ok(!r.ok && ["stack", "memory"].includes(r.error.kind), JSON.stringify(!r.ok && r.error));
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });

  it("deeply nested code is refused by the parser", async () => {
    const r = await runPy("x = " + "(".repeat(5000) + ")".repeat(5000));
    assert.equal(!r.ok && r.error.kind, "syntax");
  });
});
