// The model-facing text for results the engines return (results are plain data; these are literal ones).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatResult, type FormatOptions } from "../../../src/adapters/tools/format.ts";
import { DEFAULT_LIMITS, type RunResult } from "../../../src/index.ts";

const options: FormatOptions = {
  maxChars: 2_000,
  maxImageBytes: 1024,
  maxInlineTextBytes: 1024,
  limits: { ...DEFAULT_LIMITS },
};
const base = {
  language: "javascript" as const,
  stdout: "",
  stderr: "",
  outputTruncated: false,
  files: [],
  results: [],
  stats: { engine: "quickjs" as const, wallMs: 3.4, outputBytes: 0 },
};

describe("formatResult", () => {
  test("display items: each one's text/plain in order, its other types named, big images left out", () => {
    const big = "A".repeat(4000);
    const result: RunResult = {
      ...base,
      ok: true,
      value: "t",
      results: [
        { data: { "text/plain": "<Figure>", "image/png": big }, main: false },
        { data: { "text/plain": "t", "text/html": "<table></table>" }, main: true },
      ],
    };
    const out = formatResult(result, options);
    assert.equal(
      out.text,
      'ok (javascript, 3 ms)\nvalue: "t"\ndisplayed (2):\n[1] [image/png; image/png over 1.0 KB, not shown]\n<Figure>\n[2] (the last expression) [text/html]\n(the value above)',
    );
    assert.deepEqual(
      out.results[0],
      { data: { "text/plain": "<Figure>" }, main: false },
      "over maxImageBytes: left out",
    );
    assert.deepEqual(out.results[1], result.results[1]);
  });

  test("success: status line, value, stdout", () => {
    const out = formatResult({ ...base, ok: true, value: { a: 1 }, stdout: "hi\n" }, options);
    assert.equal(out.isError, false);
    assert.equal(out.text, "ok (javascript, 3 ms)\nvalue: { a: 1 }\nstdout:\nhi");
  });

  test("failure: kind, name, message and position first, then a hint for limit kinds", () => {
    const result: RunResult = {
      ...base,
      ok: false,
      error: { kind: "timeout", name: "TimeoutError", message: "deadline passed", line: 2, column: 5 },
    };
    const out = formatResult(result, options);
    assert.equal(out.isError, true);
    assert.match(
      out.text,
      /^error: timeout: TimeoutError: deadline passed \(line 2, column 5\)\nThe run was stopped at its 5000 ms time limit/,
    );
  });

  test("long output is cut in the middle and says so; sandbox truncation is named", () => {
    const stdout = `${"a".repeat(5_000)}END`;
    const out = formatResult({ ...base, ok: true, value: undefined, stdout, outputTruncated: true }, options);
    assert.ok(out.text.length <= 2_100, `text is ${out.text.length} characters`);
    assert.match(out.text, /stdout \(cut by the sandbox at 65536 bytes of output\):/);
    assert.match(out.text, /\[… \d+ characters of stdout cut …\]/);
    assert.match(out.text, /END$/);
  });

  test("files are listed; images inlined as base64, small text inline, big ones only listed", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const files = [
      { path: "plot.png", bytes: png, mimeType: "image/png" },
      { path: "data.csv", bytes: new TextEncoder().encode("a,b\n1,2\n"), mimeType: "text/csv" },
      { path: "big.bin", bytes: new Uint8Array(4096), mimeType: "application/octet-stream" },
    ];
    const out = formatResult({ ...base, ok: true, value: undefined, files }, options);
    assert.equal(out.files[0]!.base64, Buffer.from(png).toString("base64"));
    assert.equal(out.files[1]!.text, "a,b\n1,2\n");
    assert.equal(out.files[2]!.base64, undefined);
    assert.match(
      out.text,
      /files written: plot\.png \(image\/png, 4 B, shown below\); data\.csv \(text\/csv, 8 B, content below\); big\.bin \(application\/octet-stream, 4\.0 KB\)/,
    );
    assert.match(out.text, /--- data\.csv ---\na,b\n1,2/);
  });

  test("Python's None (undefined) is no value; JavaScript's null is a value", () => {
    const py = formatResult({ ...base, language: "python", ok: true, value: undefined, stdout: "x\n" }, options);
    assert.equal(py.text, "ok (python, 3 ms)\nstdout:\nx");
    const js = formatResult({ ...base, ok: true, value: null }, options);
    assert.equal(js.text, "ok (javascript, 3 ms)\nvalue: null");
  });

  test("nothing to show says how to get something", () => {
    const out = formatResult({ ...base, ok: true, value: undefined }, options);
    assert.match(out.text, /no value, no output/);
  });
});
