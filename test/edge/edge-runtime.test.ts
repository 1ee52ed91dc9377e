// wasmcell in Vercel's Edge Runtime (the edge-runtime package: the same VM and web APIs as Vercel Edge
// Functions), bundled with the edge-light condition, the compiled engine handed in as wasmModule.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { EdgeRuntime } from "edge-runtime";
import { bundle, QUICKJS_WASM } from "./bundle.ts";

describe("Vercel Edge Runtime", () => {
  let runtime: EdgeRuntime;
  before(async () => {
    const code = await bundle("test/edge/fixtures/edge-function.js", ["edge-light", "worker", "browser"], "iife");
    const compiled = await (
      globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<object> } }
    ).WebAssembly.compile(QUICKJS_WASM);
    runtime = new EdgeRuntime({ extend: (context) => Object.assign(context, { QUICKJS_WASM: compiled }) });
    runtime.evaluate(code);
  });

  const call = async (language: string, code: string) => {
    const res = await runtime.dispatchFetch("http://edge/", {
      method: "POST",
      body: JSON.stringify({ language, code }),
    });
    await res.waitUntil();
    return (await res.json()) as { ok: boolean; value?: unknown; kind?: string; message?: string };
  };

  it("runs JavaScript and TypeScript", async () => {
    assert.deepEqual(await call("javascript", "[1, 2].map((x) => x * 3)"), { ok: true, value: [3, 6] });
    assert.deepEqual(await call("typescript", "const n: number = 41;\nn + 1"), { ok: true, value: 42 });
  });

  it("every guest failure is a result", async () => {
    for (const [code, kind] of [
      ["let = ;", "syntax"],
      ["null.x", "runtime"],
      ["while (true) {}", "timeout"],
      ['let s = "x"; for (;;) s = s + s', "memory"],
      ["function f() { return f() } f()", "stack"],
    ]) {
      assert.equal((await call("javascript", code!)).kind, kind, code);
    }
    assert.deepEqual(await call("javascript", "'after'"), { ok: true, value: "after" });
  });

  it("a Python run is a denied result saying why", async () => {
    const r = await call("python", "1 + 1");
    assert.equal(r.kind, "denied");
    assert.match(r.message ?? "", /only the Node\.js build/);
  });
});
