// Uncaught errors name what is missing, with V8's wording for the same code (checked against this
// Node), and references to what the box lacks say what to use instead.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import vm from "node:vm";
import { boxRunner } from "./parity.ts";

function v8Message(code: string): string {
  try {
    vm.runInNewContext(code, {});
  } catch (e) {
    return (e as { message: string }).message;
  }
  return "(no error)";
}

describe("error messages say what is missing", () => {
  const run = boxRunner();
  const message = async (code: string) => {
    const r = await run(code);
    assert.equal(r.ok, false);
    return r.ok ? "" : r.error.message;
  };

  const SAME_AS_V8 = [
    "const console2 = {}; console2.assert(1 === 1)",
    "const o = { a: {} };\no.a.b(1)",
    "let x = 3; x()",
    "const f = () => ({}); f().g()",
    "const a = { b: [{}] }; a.b[0].c()",
    "const o = {}; o['k']()",
    "const a = {}; a?.b()",
    "const o = { p: 1 };\no\n  .p()",
    "let C = 1; new C()",
    "const n = { m: {} }; new n.m()",
  ];
  for (const code of SAME_AS_V8) {
    it(`names the callee like V8: ${code.replace(/\n/g, "⏎")}`, async () => {
      assert.equal(await message(code), v8Message(code));
    });
  }

  it("does not guess a name when the failing call is inside a builtin", async () => {
    assert.equal(await message("[1].map(5)"), "not a function");
  });

  it("console.assert exists, so the benchmark-style test line works", async () => {
    const r = await run("console.assert(1 + 1 === 2); console.assert(1 === 2, 'math')");
    assert.equal(r.ok, true);
    assert.equal(r.stderr, "Assertion failed: math\n");
  });

  const ABSENT: [string, RegExp][] = [
    ["require('fs')", /^require is not defined: the sandbox has no module loader/],
    ["process.env.HOME", /^process is not defined: there is no Node\.js process object/],
    ["await fetch('https://example.com')", /^fetch is not defined: this sandbox has no network access/],
    ["Buffer.from('x')", /^Buffer is not defined: Buffer is Node-only; use Uint8Array/],
    ["document.title", /^document is not defined: this is not a browser/],
  ];
  for (const [code, expected] of ABSENT) {
    it(`says what to use instead: ${code}`, async () => {
      const r = await run(code);
      assert.equal(r.ok, false);
      if (!r.ok) {
        assert.equal(r.error.name, "ReferenceError");
        assert.equal(r.error.kind, "runtime");
        assert.match(r.error.message, expected);
      }
    });
  }

  it("leaves other undefined names as QuickJS reports them", async () => {
    assert.equal(await message("totl + 1"), "'totl' is not defined");
  });
});
