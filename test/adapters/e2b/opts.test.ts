// wasmcell/e2b's options: E2B's language names, and Python cells indented as a whole (E2B's examples
// are written inside template strings) run as IPython runs them.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cellCode, languageOf } from "../../../src/adapters/e2b/opts.ts";
import { InvalidOptionError, NotSupportedError } from "../../../src/core/errors.ts";

describe("languageOf", () => {
  test("E2B's names map to wasmcell's languages; Python is the default", () => {
    assert.equal(languageOf(undefined), "python");
    assert.equal(languageOf("python"), "python");
    assert.equal(languageOf("js"), "javascript");
    assert.equal(languageOf("JavaScript"), "javascript");
    assert.equal(languageOf("ts"), "typescript");
    assert.equal(languageOf("typescript"), "typescript");
  });

  test("R, Java and Bash are not supported; anything else is a bad option", () => {
    for (const l of ["r", "java", "bash"]) assert.throws(() => languageOf(l), NotSupportedError);
    assert.throws(() => languageOf("cobol"), InvalidOptionError);
    assert.throws(() => languageOf(3), InvalidOptionError);
  });
});

describe("cellCode", () => {
  test("a Python cell indented as a whole loses the common indentation, keeping its lines", () => {
    const code = "\n        import math\n\n        if True:\n            x = math.pi\n        x\n        ";
    assert.equal(cellCode(code, "python"), "\nimport math\n\nif True:\n    x = math.pi\nx\n");
  });

  test("a cell not indented as a whole is left as it is (its IndentationError is the interpreter's)", () => {
    assert.equal(cellCode("x = 1\n  y = 2", "python"), "x = 1\n  y = 2");
    assert.equal(cellCode("  x = 1\ny = 2", "python"), "  x = 1\ny = 2");
    assert.equal(cellCode("x = 1", "python"), "x = 1");
  });

  test("JavaScript and TypeScript are never changed", () => {
    assert.equal(cellCode("  const s = `\n  a`", "javascript"), "  const s = `\n  a`");
    assert.equal(cellCode("  1", "typescript"), "  1");
  });
});
