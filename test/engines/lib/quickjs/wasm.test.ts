// `javascript.wasmModule`: the compiled QuickJS module handed in by the host (how Workers and Vercel
// Edge load WebAssembly). Every module instance — the first, its spare, each replacement after a
// poisoning — comes from it; a bad value is host misuse and throws, naming the option.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { ModulePool } from "../../../../src/engines/lib/quickjs/modules.ts";
import { createSandbox, InvalidOptionError } from "../../../../src/index.ts";

const wasmPath = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
// The project's types carry no DOM library, so WebAssembly is reached through globalThis.
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } };
const compiled = new wasm.Module(readFileSync(wasmPath));

describe("quickjs wasmModule", () => {
  for (const [label, wasmModule] of [
    ["a WebAssembly.Module", compiled],
    ["a promise of one", Promise.resolve(compiled)],
  ] as const) {
    it(`runs from ${label}: values, timeouts and syntax errors are results`, async () => {
      await using sandbox = await createSandbox({ javascript: { wasmModule } });
      const r = await sandbox.run({ language: "javascript", code: "1 + 1" });
      assert.equal(r.ok && r.value, 2);
      const slow = await sandbox.run({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 100 } });
      assert.equal(!slow.ok && slow.error.kind, "timeout");
      const bad = await sandbox.run({ language: "javascript", code: "let = ;" });
      assert.equal(!bad.ok && bad.error.kind, "syntax");
    });
  }

  it("a poisoned module is replaced by one instantiated from the same compiled module", async () => {
    const pool = new ModulePool(compiled);
    const first = await pool.get();
    const cell = first.takeCell();
    cell.svc.newObject(); // a live handle makes freeing the runtime abort the module
    cell.free();
    assert.equal(first.alive, false);
    const second = await pool.get();
    assert.notEqual(second, first);
    assert.equal(second.alive, true);
    pool.close();
  });

  it("anything but a module (or a promise of one) throws InvalidOptionError naming the option", async () => {
    for (const bad of [5, "quickjs.wasm", new Uint8Array(4), {}]) {
      await assert.rejects(
        createSandbox({ javascript: { wasmModule: bad } }),
        (e: unknown) => e instanceof InvalidOptionError && e.field === "javascript.wasmModule",
      );
    }
    await using sandbox = await createSandbox({ javascript: { wasmModule: Promise.resolve({}) } });
    await assert.rejects(
      sandbox.run({ language: "javascript", code: "1" }),
      (e: unknown) => e instanceof InvalidOptionError && /not a WebAssembly.Module/.test(e.message),
    );
  });
});
