// Every `limits.memoryMb` the schema accepts (1 to 4096) works on every engine. JavaScript's
// WebAssembly memory is at most 2 GiB, so for JavaScript a larger cap means 2048 MB (one constant,
// pinned here to the module's real maximum); before, 4096 MB overflowed QuickJS's 32-bit memory limit
// to 0 and every JavaScript run failed with "Uncaught null".
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { ModulePool } from "../../src/engines/lib/quickjs/modules.ts";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { QUICKJS_MAX_MEMORY_MB, resolveOptions, resolveRequest } from "../../src/options/index.ts";

const SCHEMA_MAX_MB = 4096;
const PAGE = 64 * 1024;
/** A few MB of objects: a run that allocates, not only one that evaluates a constant. */
const JS_ALLOCATES = "const a = []; for (let i = 0; i < 2e5; i++) a.push({ i }); a.length";

describe("limits.memoryMb up to the schema's maximum", { timeout: 180_000 }, () => {
  const sandboxes: Sandbox[] = [];
  after(() => Promise.all(sandboxes.map((s) => s.close())));

  for (const isolation of ["thread", "in-process"] as const) {
    it(`JavaScript (${isolation}): every cap up to ${SCHEMA_MAX_MB} MB runs and allocates`, async () => {
      const sandbox = await createSandbox({ javascript: { isolation, workers: 1 } });
      sandboxes.push(sandbox);
      for (const memoryMb of [1024, 2048, 2049, 4080, 4081, 4095, SCHEMA_MAX_MB]) {
        const r = await sandbox.run({ language: "javascript", code: JS_ALLOCATES, limits: { memoryMb } });
        assert.equal(r.ok && r.value, 2e5, `${memoryMb} MB: ${r.ok ? "" : r.error.message}`);
        // A thrown error is read under the cap plus a grace: that arithmetic must not wrap either.
        const thrown = await sandbox.run({
          language: "javascript",
          code: "throw new RangeError('x')",
          limits: { memoryMb },
        });
        assert.equal(!thrown.ok && thrown.error.kind, "runtime", `${memoryMb} MB`);
        assert.equal(!thrown.ok && thrown.error.name, "RangeError", `${memoryMb} MB`);
      }
    });
  }

  it("a JavaScript run's cap is at most what its WebAssembly memory can hold", () => {
    const options = resolveOptions({ limits: { memoryMb: SCHEMA_MAX_MB } });
    assert.equal(resolveRequest({ language: "javascript", code: "1" }, options).limits.memoryMb, QUICKJS_MAX_MEMORY_MB);
    assert.equal(resolveRequest({ language: "python", code: "1" }, options).limits.memoryMb, SCHEMA_MAX_MB);
    const lower = resolveRequest({ language: "typescript", code: "1", limits: { memoryMb: 100 } }, options);
    assert.equal(lower.limits.memoryMb, 100);
  });

  it(`the QuickJS module's memory grows to exactly ${QUICKJS_MAX_MEMORY_MB} MB and no further`, async () => {
    // Growing reserves address space without touching it: no host memory is used.
    const pool = new ModulePool();
    try {
      const wasm = await pool.get();
      const memory = wasm.memory as unknown as { buffer: ArrayBuffer; grow(pages: number): number };
      const max = (QUICKJS_MAX_MEMORY_MB * 1024 * 1024) / PAGE;
      memory.grow(max - memory.buffer.byteLength / PAGE);
      assert.equal(memory.buffer.byteLength, QUICKJS_MAX_MEMORY_MB * 1024 * 1024);
      assert.throws(() => memory.grow(1), RangeError);
    } finally {
      pool.close();
    }
  });

  for (const engine of ["pyodide", "native"] as const) {
    it(`Python (${engine}): a ${SCHEMA_MAX_MB} MB cap runs and allocates`, async () => {
      const sandbox = await createSandbox({ python: { engine, pool: 1 } });
      sandboxes.push(sandbox);
      const r = await sandbox.run({
        language: "python",
        code: "len(bytearray(50_000_000))",
        limits: { memoryMb: SCHEMA_MAX_MB, timeoutMs: 30_000 },
      });
      assert.equal(r.ok && r.value, 50_000_000, r.ok ? "" : r.error.message);
    });
  }
});
