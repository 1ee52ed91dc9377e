// examples/cloudflare-worker in workerd (Cloudflare's runtime, through miniflare), without
// nodejs_compat: agent JavaScript and TypeScript run; every guest failure is a result; Python is a
// clear error; the engine recovers after a run that poisons it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Miniflare } from "miniflare";
import { bundle, QUICKJS_WASM } from "./bundle.ts";

describe("Cloudflare Worker example (workerd)", () => {
  let mf: Miniflare;
  before(async () => {
    const code = await bundle("examples/cloudflare-worker/src/worker.js", ["workerd", "worker", "browser"]);
    mf = new Miniflare({
      modules: [
        { type: "ESModule", path: "worker.js", contents: code },
        { type: "CompiledWasm", path: "quickjs.wasm", contents: QUICKJS_WASM },
      ],
      compatibilityDate: "2025-09-01",
    });
    await mf.ready;
  });
  after(() => mf.dispose());

  const call = async (language: string, code: string): Promise<string> => {
    const res = await mf.dispatchFetch("http://worker/", { method: "POST", body: JSON.stringify({ language, code }) });
    assert.equal(res.status, 200);
    return res.text();
  };

  it("runs JavaScript and TypeScript", async () => {
    assert.match(
      await call("javascript", "[1, 2, 3].map((x) => x * 2)"),
      /^ok \(javascript, \d+ ms\)\nvalue: \[2, 4, 6\]$/,
    );
    assert.match(await call("typescript", "const n: number = 41;\nn + 1"), /value: 42/);
  });

  it("every guest failure is a result: syntax, runtime, timeout, memory, stack", async () => {
    assert.match(await call("javascript", "let = ;"), /^error: syntax/m);
    assert.match(await call("javascript", "null.x"), /^error: runtime: TypeError/m);
    assert.match(await call("javascript", "while (true) {}"), /^error: timeout/m);
    assert.match(await call("javascript", 'let s = "x"; for (;;) s = s + s'), /^error: memory/m);
    assert.match(await call("javascript", "function f() { return f() } f()"), /^error: stack/m);
    const deep = `type D = ${"Array<".repeat(5000)}number${">".repeat(5000)};\n1`;
    assert.match(await call("typescript", deep), /^error: stack/m);
    // The engine still works after all of that.
    assert.match(await call("typescript", "const s: string = 'still';\ns"), /value: "still"/);
  });

  it("Python is not offered here, and asking for it says why", async () => {
    assert.match(await call("python", "1 + 1"), /language must be one of "javascript", "typescript"/);
  });
});
