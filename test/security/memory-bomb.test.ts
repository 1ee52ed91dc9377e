// Threat: guest code allocates until the host runs out of memory.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { cgroupSupport } from "../../src/jail/index.ts";
import { closeNative, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

const BOMBS: Record<string, string> = {
  "array of itself": "const a = []; while (true) a.push(a);",
  "array of objects": "const a = []; while (true) a.push({ x: 1 });",
  "string doubling": "let s = 'x'; while (true) s += s;",
  "one huge string": "'x'.repeat(2 ** 28)",
  "one huge typed array": "new Uint8Array(2 ** 31 - 1)",
  "many typed arrays": "const l = []; while (true) l.push(new Float64Array(1e4));",
  Map: "const m = new Map(); let i = 0; while (true) m.set(i++, {});",
  JSON: "let o = [0]; for (;;) o = JSON.parse(JSON.stringify([o, o, o]));",
  // A Blob's bytes are in the guest heap: parts are copied, so a Blob of Blobs cannot stand for more.
  "Blob doubling": "let b = new Blob(['x']); for (;;) b = new Blob([b, b]);",
  "Blob of many parts": "const u = new Uint8Array(1 << 16); new Blob(new Array(1 << 12).fill(u));",
};

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { memoryMb: 4, timeoutMs: 10_000 } });
  });
  after(() => sandbox.close());

  for (const [name, code] of Object.entries(BOMBS)) {
    it(`stops a ${name} bomb with kind memory`, async () => {
      const r = await sandbox.run({ language: "javascript", code });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "memory", JSON.stringify(!r.ok && r.error));
      assert.match(!r.ok ? r.error.message : "", /4 MB memory limit \(limits\.memoryMb\)/);
      const next = await sandbox.run({ language: "javascript", code: "6 * 7" });
      assert.equal(next.ok && next.value, 42);
    });
  }
});

describe("native", () => {
  after(closeNative);

  it("growing allocations end as kind memory at the cap", async () => {
    const r = await runNative("x = []\nwhile True:\n    x.append(bytearray(1 << 20))", { memoryMb: 64 });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.kind, "memory");
    if (cgroupSupport().memoryParent) {
      // killed by the cgroup's OOM killer, with the peak at the cap
      assert.match(!r.ok ? r.error.message : "", /64 MB cap \(limits\.memoryMb, cgroup\)/);
      assert.ok(r.stats.peakMemoryBytes! <= 64 << 20);
    }
  });

  it("one huge allocation is a runtime MemoryError (the address-space limit refused it in the process), with the user's line", async () => {
    const r = await runNative("import numpy as np\nx = np.ones(10**10)", { memoryMb: 64 });
    assert.equal(r.ok, false);
    // The host saw no kill: `memory` is its verdict only for the cgroup's OOM kill.
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.match(!r.ok ? r.error.name : "", /MemoryError$/);
    assert.equal(!r.ok && r.error.line, 2);
  });

  it("filling the scratch tmpfs stops at its size (ENOSPC), not in host memory", async () => {
    // 1 MiB files (each under the 8 MiB file-size rlimit) until the 48 MiB scratch (2 × maxFileBytes + 32 MiB) is full
    const r = await runNative(
      "import errno\nn = 0\ntry:\n    while True:\n        with open(f'/tmp/fill{n}', 'wb') as f:\n            f.write(b'x' * (1 << 20))\n        n += 1\nexcept OSError as e:\n    res = [errno.errorcode[e.errno], 40 <= n <= 48]\nres",
      { memoryMb: 256, maxFileBytes: 8 << 20 },
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, ["ENOSPC", true]);
  });
});

describe("pyodide", () => {
  after(closePyodide);

  it("growing allocations end as kind memory at memoryMb (the WASM heap cannot grow past it); the sidecar lives", async () => {
    const r = await runPy("x = []\nwhile True:\n    x.append(bytearray(1 << 20))", { memoryMb: 128 });
    assert.equal(!r.ok && r.error.kind, "memory", JSON.stringify(r));
    assert.equal(!r.ok && r.error.name, "MemoryError");
    assert.ok(r.stats.peakMemoryBytes! <= 128 << 20);
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });

  it("one huge allocation is kind memory", async () => {
    const r = await runPy("b = bytearray(1500 * 1024**2)", { memoryMb: 256 });
    assert.equal(!r.ok && r.error.kind, "memory");
  });

  it("a string blow-up is kind memory", async () => {
    const r = await runPy("s = 'x'\nwhile True:\n    s = s + s", { memoryMb: 128 });
    assert.equal(!r.ok && r.error.kind, "memory");
  });
});
