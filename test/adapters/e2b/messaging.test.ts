// wasmcell/e2b's results: a display item (a MIME bundle, as the engines return it) becomes E2B's
// `Result` field by field; `Execution.text` is the main result's text; a run's value becomes the main
// result when no display item is. Hand-made items: the mapping is checked without an engine.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Execution, ExecutionError, Result } from "../../../src/adapters/e2b/index.ts";
import { toResult, valueResult } from "../../../src/adapters/e2b/messaging.ts";
import type { DisplayItem } from "../../../src/core/types.ts";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";

describe("a display item as an E2B Result", () => {
  test("every MIME type E2B names lands in its field", () => {
    const item: DisplayItem = {
      main: false,
      data: {
        "text/plain": "<Figure size 640x480 with 1 Axes>",
        "text/html": "<table><tr><td>1</td></tr></table>",
        "text/markdown": "# title",
        "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>",
        "image/png": PNG,
        "image/jpeg": "/9j/4AAQ",
        "application/pdf": "JVBERi0=",
        "text/latex": "$x^2$",
        "application/json": { a: [1, 2, 3] },
        "application/javascript": "console.log(1)",
      },
    };
    const r = toResult(item);
    assert.ok(r instanceof Result);
    assert.equal(r.text, "<Figure size 640x480 with 1 Axes>");
    assert.equal(r.html, "<table><tr><td>1</td></tr></table>");
    assert.equal(r.markdown, "# title");
    assert.equal(r.svg, "<svg xmlns='http://www.w3.org/2000/svg'/>");
    assert.equal(r.png, PNG);
    assert.equal(r.jpeg, "/9j/4AAQ");
    assert.equal(r.pdf, "JVBERi0=");
    assert.equal(r.latex, "$x^2$");
    // As E2B's kernel sends it at run time: the data, not a string of it.
    assert.deepEqual(r.json, { a: [1, 2, 3] });
    assert.equal(r.javascript, "console.log(1)");
    assert.equal(r.isMainResult, false);
    assert.deepEqual(r.extra, {});
    assert.deepEqual(r.formats(), ["html", "markdown", "svg", "png", "jpeg", "pdf", "latex", "json", "javascript"]);
    assert.equal(r.raw, item.data);
  });

  test("a plain-text item has only text; other MIME types go to extra and formats()", () => {
    const r = toResult({ main: true, data: { "text/plain": "42", "application/vnd.custom+json": { k: 1 } } });
    assert.equal(r.text, "42");
    assert.equal(r.html, undefined);
    assert.equal(r.png, undefined);
    assert.equal(r.isMainResult, true);
    assert.deepEqual(r.extra, { "application/vnd.custom+json": { k: 1 } });
    assert.deepEqual(r.formats(), ["application/vnd.custom+json"]);
  });

  test("E2B's own keys: e2b/data and e2b/chart become data and chart when they are plain objects", () => {
    const r = toResult({
      main: true,
      data: { "text/plain": "df", "e2b/data": { a: [1, 2] }, "e2b/chart": { type: "line", elements: [] } },
    });
    assert.deepEqual(r.data, { a: [1, 2] });
    assert.deepEqual(r.chart, { type: "line", elements: [] });
    assert.deepEqual(r.formats(), ["data", "chart"]);
    const odd = toResult({ main: false, data: { "text/plain": "x", "e2b/data": [1, 2], "e2b/chart": "line" } });
    assert.equal(odd.data, undefined);
    assert.equal(odd.chart, undefined);
  });

  test("a field of the wrong type is left out, never coerced", () => {
    const r = toResult({ main: false, data: { "text/plain": "x", "image/png": 123, "text/html": { a: 1 } } });
    assert.equal(r.png, undefined);
    assert.equal(r.html, undefined);
    assert.deepEqual(r.formats(), []);
  });

  test("a bundle key named __proto__ stays a key of extra, never its prototype", () => {
    const bundle = JSON.parse('{"text/plain": "x", "__proto__": {"polluted": true}}') as DisplayItem["data"];
    const r = toResult({ main: false, data: bundle });
    assert.equal(Object.getPrototypeOf(r.extra), Object.prototype);
    assert.equal((r.extra as { polluted?: boolean }).polluted, undefined);
    assert.deepEqual(Object.keys(r.extra), ["__proto__"]);
  });

  test("toJSON carries the fields, extra only when there is some", () => {
    const json = JSON.parse(JSON.stringify(toResult({ main: true, data: { "text/plain": "1", "image/png": PNG } })));
    assert.deepEqual(json, { text: "1", png: PNG, isMainResult: true });
    const withExtra = JSON.parse(JSON.stringify(toResult({ main: false, data: { "text/plain": "1", "x/y": "z" } })));
    assert.deepEqual(withExtra.extra, { "x/y": "z" });
  });
});

describe("Execution", () => {
  test("text is the main result's text, whatever its position", () => {
    const e = new Execution([
      toResult({ main: false, data: { "text/plain": "<Figure>", "image/png": PNG } }),
      toResult({ main: true, data: { "text/plain": "2" } }),
    ]);
    assert.equal(e.text, "2");
    assert.equal(new Execution([toResult({ main: false, data: { "text/plain": "shown" } })]).text, undefined);
    assert.equal(new Execution().text, undefined);
  });

  test("toJSON has results, logs and error", () => {
    const error = ExecutionError.from({ kind: "runtime", name: "NameError", message: "name 'x' is not defined" });
    const e = new Execution([], { stdout: ["a\n"], stderr: [] }, error, 3);
    assert.equal(e.executionCount, 3);
    const json = JSON.parse(JSON.stringify(e));
    assert.deepEqual(json, {
      results: [],
      logs: { stdout: ["a\n"], stderr: [] },
      error: {
        name: "NameError",
        value: "name 'x' is not defined",
        traceback: "NameError: name 'x' is not defined",
        kind: "runtime",
      },
    });
  });

  test("an ExecutionError keeps the host's verdict: kind and the limit that fired", () => {
    const error = ExecutionError.from({
      kind: "timeout",
      name: "TimeoutError",
      message: "the run did not finish",
      stack: "Traceback ...",
      limit: "timeoutMs",
    });
    assert.equal(error.name, "TimeoutError");
    assert.equal(error.value, "the run did not finish");
    assert.equal(error.traceback, "Traceback ...");
    assert.equal(error.kind, "timeout");
    assert.equal(error.limit, "timeoutMs");
  });
});

describe("a run's value as the main result (no main display item)", () => {
  test("Python: shown as Python shows it", () => {
    const text = (v: unknown) => valueResult(v, "python")?.text;
    assert.equal(text(2), "2");
    assert.equal(text(2.5), "2.5");
    assert.equal(text(true), "True");
    assert.equal(text([1, "a", null, false]), "[1, 'a', None, False]");
    assert.equal(text({ k: "it's" }), `{'k': "it's"}`);
    // A value that is not JSON comes back as its repr(): not quoted again.
    assert.equal(text("   a\n0  1"), "   a\n0  1");
    assert.equal(valueResult(null, "python"), undefined, "None shows nothing, as in Jupyter");
    assert.equal(valueResult(undefined, "python"), undefined);
    assert.equal(valueResult(2, "python")?.isMainResult, true);
  });

  test("JavaScript: shown as Node shows it, a string bare", () => {
    const text = (v: unknown) => valueResult(v, "javascript")?.text;
    assert.equal(text(2), "2");
    assert.equal(text("bar"), "bar");
    assert.equal(text([1, "a", { b: 2 }]), "[ 1, 'a', { b: 2 } ]");
    assert.equal(text(null), "null");
    assert.equal(text(10n), "10n");
    assert.equal(valueResult(undefined, "javascript"), undefined);
  });
});
