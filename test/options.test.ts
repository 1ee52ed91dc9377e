import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidOptionError } from "../src/errors.ts";
import { DEFAULT_LIMITS, resolveOptions, resolveRequest } from "../src/options.ts";

describe("options", () => {
  it("fills every default from one place", () => {
    const o = resolveOptions(undefined);
    assert.deepEqual(o.limits, DEFAULT_LIMITS);
    assert.equal(o.python.engine, "pyodide");
    assert.equal(o.python.prewarm, false, "no python option: the pool starts on first use");
    assert.equal(resolveOptions({ python: {} }).python.prewarm, true);
    assert.equal(o.seal.seccomp, "enforce");
  });

  it("names the bad field", () => {
    const cases: Array<[unknown, string]> = [
      [{ limits: { timeoutMs: -1 } }, "limits.timeoutMs"],
      [{ limits: { bogus: 1 } }, "limits.bogus"],
      [{ python: { pool: 0 } }, "python.pool"],
      [{ seal: { seccomp: "loose" } }, "seal.seccomp"],
      [{ javascript: { hostFunctions: { "bad name": () => 1 } } }, "javascript.hostFunctions.bad name"],
      [{ nope: true }, "nope"],
    ];
    for (const [input, field] of cases) {
      assert.throws(
        () => resolveOptions(input as never),
        (e: unknown) => e instanceof InvalidOptionError && e.field === field,
        field,
      );
    }
  });

  it("validates requests and picks the engine", () => {
    const o = resolveOptions({});
    assert.equal(resolveRequest({ language: "typescript", code: "1" }, o).engine, "quickjs");
    assert.equal(resolveRequest({ language: "python", code: "1" }, o).engine, "pyodide");
    assert.throws(() => resolveRequest({ language: "python", code: "1", engine: "quickjs" }, o), /request\.engine/);
    assert.throws(() => resolveRequest({ language: "ruby" as never, code: "1" }, o), /request\.language/);
    assert.throws(() => resolveRequest({ language: "python", code: 1 as never }, o), /request\.code/);
    assert.throws(
      () => resolveRequest({ language: "python", code: "x".repeat(20), limits: { maxCodeBytes: 10 } }, o),
      /request\.code: is 20 bytes/,
    );
  });

  it("refuses file paths that leave the working directory", () => {
    const o = resolveOptions({});
    for (const bad of ["/etc/passwd", "../x", "a/../../x", "", "a\0b", "C:/x"]) {
      assert.throws(
        () => resolveRequest({ language: "python", code: "", files: { [bad]: "x" } }, o),
        InvalidOptionError,
        bad,
      );
    }
    const ok = resolveRequest({ language: "python", code: "", files: { "./data/in.csv": "a,b" } }, o);
    assert.deepEqual([...ok.files.keys()], ["data/in.csv"]);
  });
});

describe("README options table", () => {
  it("lists every limit with the default src/options.ts really has", async () => {
    const { readFile } = await import("node:fs/promises");
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const table = readme.slice(readme.indexOf("<!-- options:limits -->"));
    const rows = new Map<string, number>();
    for (const m of table.matchAll(/^\| `(\w+)` \| (\d+) \|/gm)) rows.set(m[1]!, Number(m[2]));
    assert.deepEqual(Object.fromEntries(rows), { ...DEFAULT_LIMITS });
  });
});
