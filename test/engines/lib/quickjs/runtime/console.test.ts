// The rest of console against Node's output for the same calls (stdout and stderr compared).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runNode } from "../../../../helpers/process.ts";
import { boxRunner } from "./parity.ts";

const CASES: Record<string, string> = {
  "assert with and without a message": `console.assert(true, "never"); console.assert(0); console.assert(false, "x=%d y=%s", 5, "s"); console.assert(null, [1, 2], "tail");`,
  "count and countReset": `console.count(); console.count("a"); console.count(); console.countReset("a"); console.count("a"); console.countReset("missing");`,
  "group nesting indents every line": `console.group("A"); console.log(1); console.group(); console.error("e\\nf"); console.groupEnd(); console.info({ a: 1 }); console.groupEnd(); console.groupEnd(); console.log("out");`,
  groupCollapsed: `console.groupCollapsed("C"); console.warn("w"); console.groupEnd();`,
  "table of objects, arrays, primitives and columns": `console.table([{ a: 1, b: "x" }, { a: 2, c: true }]); console.table([[1, 2], [3]]); console.table([1, "two", null]); console.table({ r1: { x: 1 }, r2: { y: [1, 2] } }); console.table([{ a: 1, b: 2 }], ["b"]); console.table(5); console.table("s");`,
  "table of a Map and a Set": `console.table(new Map([["k", { v: 1 }]])); console.table(new Set(["s"]));`,
  "Blob and File show their size and type (File: name, lastModified), nested and with %o":
    'const b = new Blob(["abc"], { type: "text/plain" }); console.log(b); console.log(new File(["x"], "a\'b.txt", { lastModified: 5 })); console.log([b], { b }, "%o", b); console.log({ deep: { deeper: { b } } }); console.log(new Blob([]));',
  "an object of another class named Blob is shown as itself": `console.log(new (class Blob { constructor() { this.x = 1; } })(), [new (class File {})()]);`,
  "time labels that do not exist warn": `console.timeEnd("nope"); console.timeLog("nope"); console.time("t"); console.time("t");`,
};

describe("console methods print what Node prints", () => {
  const run = boxRunner();
  for (const [name, code] of Object.entries(CASES)) {
    it(name, async () => {
      const box = await run(code);
      assert.equal(box.ok, true, JSON.stringify(!box.ok && box.error));
      const node = await runNode(["-e", code]);
      assert.equal(box.stdout, node.stdout);
      // Node prefixes process warnings with "(node:PID) " and adds a hint line; compare the warnings themselves.
      const nodeErr = node.stderr.replace(/^\(node:\d+\) /gm, "").replace(/^\(Use `node --trace-warnings.*\n/gm, "");
      assert.equal(box.stderr, nodeErr);
    });
  }

  it("time, timeLog and timeEnd print durations in Node's format", async () => {
    const box = await run(
      `console.time(); console.timeLog(undefined, "extra"); console.timeEnd(); console.time("x"); console.timeEnd("x")`,
    );
    assert.match(box.stdout, /^default: \d+\.\d{3}ms extra\ndefault: \d+\.\d{3}ms\nx: \d+\.\d{3}ms\n$/);
  });

  it("trace prints its message and the user's frames on stderr", async () => {
    const box = await run(`function inner() { console.trace("here %d", 1); }\ninner();`);
    assert.match(box.stderr, /^Trace: here 1\n {4}at inner \(main\.js:1:\d+\)\n/);
    assert.doesNotMatch(box.stderr, /wasmcell:/);
  });

  it("the group indentation and output caps apply together", async () => {
    const box = await run(`console.group("g"); for (let i = 0; i < 20000; i++) console.log("line " + i);`);
    assert.equal(box.ok, true);
    assert.equal(box.outputTruncated, true);
    assert.match(box.stdout, /^g\n {2}line 0\n {2}line 1\n/);
  });
});
