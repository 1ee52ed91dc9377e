// Threat: guest code recurses (or nests) until a stack overflows — Python's, the WASM stack, or the
// host's native stack — to crash the engine or the host.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("pyodide", () => {
  after(closePyodide);

  // A RecursionError is `runtime`: the host cannot tell it from a raised one (forged-python-stack.test.ts).
  it("unbounded recursion is a RecursionError; the next run is served", async () => {
    const r = await runPy("def f(n):\n    return f(n + 1)\nf(0)");
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.equal(!r.ok && r.error.name, "RecursionError");
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });

  it("raising the recursion limit does not let recursion overflow the WASM stack into a crash of the host", async () => {
    const r = await runPy("import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)");
    assert.equal(r.ok, false);
    // Python frames live on the WASM heap: with the limit lifted, the heap cap is usually hit first
    // (or Python's C-stack guard raises a RecursionError, kind runtime).
    assert.ok(!r.ok && ["stack", "memory", "runtime"].includes(r.error.kind), JSON.stringify(!r.ok && r.error));
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });

  it("deeply nested code is refused by the parser", async () => {
    const r = await runPy("x = " + "(".repeat(5000) + ")".repeat(5000));
    assert.equal(!r.ok && r.error.kind, "syntax");
  });
});

// QuickJS: in quickjs-emscripten 0.32, recursion in QuickJS's C code (JSON.parse of deep nesting,
// deep recursion with a large stack limit) overflows the *host's* native stack, and V8 throws a
// RangeError out of the WASM module before QuickJS's own limit fires. The run must report kind
// `stack`, the poisoned module must be replaced, and the host must carry on.
describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());

  it("guest recursion under the guest limit is kind stack with the user's line", async () => {
    const r = await sandbox.run({ language: "javascript", code: "function f(n) {\n  return f(n + 1) + 1;\n}\nf(0)" });
    assert.equal(!r.ok && r.error.kind, "stack");
    assert.match(!r.ok ? r.error.message : "", /call stack overflowed/);
    assert.equal(!r.ok && r.error.line, 2);
  });

  it("C recursion that overflows the host stack is kind stack, and the next run works", async () => {
    const r = await sandbox.run({ language: "javascript", code: "JSON.parse('['.repeat(1e5))" });
    assert.equal(!r.ok && r.error.kind, "stack", JSON.stringify(!r.ok && r.error));
    assert.match(!r.ok ? r.error.message : "", /host's native stack/);
    const next = await sandbox.run({ language: "javascript", code: "[1, 2, 3].length" });
    assert.equal(next.ok && next.value, 3);
  });

  it("a stack limit above what the host can hold still ends as kind stack", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: "function f(n) { return f(n + 1) + 1 } f(0)",
      limits: { maxStackKb: 8192 },
    });
    assert.equal(!r.ok && r.error.kind, "stack");
    const next = await sandbox.run({ language: "javascript", code: "'still here'" });
    assert.equal(next.ok && next.value, "still here");
  });
});
