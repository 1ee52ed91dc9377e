// The TypeScript stripper (src/engines/lib/quickjs/source.ts): positions kept exactly, syntax errors at the
// user's line and column, and an input that breaks the stripper breaks nothing after it.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createSandbox } from "../../../../src/index.ts";
import { stripTypes } from "../../../../src/engines/lib/quickjs/source.ts";

async function stripped(code: string): Promise<string> {
  const r = await stripTypes(code);
  assert.ok("code" in r, JSON.stringify(r));
  return r.code;
}

const DEEP_TYPE = `type Deep = ${"Array<".repeat(5000)}number${">".repeat(5000)};\nconst n: number = 1;\nn`;

describe("TypeScript stripper", () => {
  it("blanks types in place: every line and column of the output is the input's", async () => {
    const code = [
      "interface P { x: number }",
      "const f = <T,>(a: T): T => a;",
      "const g = (a: number)",
      ": number => a;",
      "class C<T> implements P { declare y: string; x: number = 1; private z?: T }",
      "import type { Q } from 'q';",
      "let v = f(1)! as unknown satisfies unknown;",
    ].join("\n");
    const out = await stripped(code);
    assert.equal(out.length, code.length);
    assert.deepEqual(
      out.split("\n").map((l) => l.length),
      code.split("\n").map((l) => l.length),
    );
    // Each identifier the JavaScript keeps stands at its original offset.
    for (const word of ["const f", "(a", "=> a", "class C", "x = 1", "let v = f(1)"]) {
      assert.equal(out.indexOf(word), code.indexOf(word), word);
    }
    assert.doesNotMatch(out, /number|interface|implements|declare|satisfies|unknown|private/);
  });

  it("a syntax error is kind syntax at the user's line and column", async () => {
    const r = await stripTypes("const a = 1;\nlet b: = 2;");
    assert.ok("error" in r);
    assert.deepEqual(
      { kind: r.error.kind, line: r.error.line, column: r.error.column, message: r.error.message },
      { kind: "syntax", line: 2, column: 8, message: "Type expected." },
    );
  });

  for (const [code, what, line, column] of [
    ["enum E { A }", /^enum needs a transform/, 1, 1],
    ["class C {\n  constructor(public a: number) {}\n}", /^a parameter property/, 2, 15],
    ["namespace N { export const x = 1 }", /^a namespace with values/, 1, 1],
    ["const y = 1;\nlet x = <any>y;", /type assertion.*use `value as T`/, 2, 9],
  ] as const) {
    it(`TypeScript that needs a transform is a syntax error that says so: ${code.split("\n")[0]}`, async () => {
      const r = await stripTypes(code);
      assert.ok("error" in r);
      assert.equal(r.error.kind, "syntax");
      assert.match(r.error.message, what);
      assert.match(r.error.message, /only strips types/);
      assert.deepEqual([r.error.line, r.error.column], [line, column]);
    });
  }

  it("a type nested 5,000 deep is kind stack, not syntax", async () => {
    const r = await stripTypes(DEEP_TYPE);
    assert.ok("error" in r);
    assert.equal(r.error.kind, "stack");
    assert.match(r.error.message, /nested too deeply/);
  });

  describe("through the sandbox", () => {
    const opened = createSandbox();
    after(async () => (await opened).close());

    it("after the stripper fails, every later TypeScript run still works", async () => {
      const sandbox = await opened;
      const deep = await sandbox.run({ language: "typescript", code: DEEP_TYPE });
      assert.equal(!deep.ok && deep.error.kind, "stack");
      for (let i = 0; i < 3; i++) {
        const r = await sandbox.run({ language: "typescript", code: `const n: number = ${i};\nn * 2` });
        assert.equal(r.ok && r.value, i * 2, JSON.stringify(r));
        const bad = await sandbox.run({ language: "typescript", code: "let b: = 2;" });
        assert.equal(!bad.ok && bad.error.kind, "syntax");
      }
      const after = await sandbox.run({ language: "typescript", code: "type T = string;\nconst s: T = 'a';\nnull.x;" });
      assert.equal(!after.ok && after.error.line, 3);
    });
  });
});
