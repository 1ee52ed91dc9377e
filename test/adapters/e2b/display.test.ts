// wasmcell/e2b with display items: E2B's display and chart examples with only the import changed.
// pandas and matplotlib need native Python sessions: the native suite is skipped where the build
// has none (ENGINE_INFO.native.sessions).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Sandbox, type Result } from "../../../src/adapters/e2b/index.ts";
import { ENGINE_INFO, type EngineInfo } from "../../../src/core/types.ts";
import { createSandbox, type Sandbox as WasmcellSandbox } from "../../../src/index.ts";

const nativeSessions = (ENGINE_INFO.native as EngineInfo).sessions;
const NATIVE = { skip: nativeSessions ? false : "native Python sessions are not in this build" } as const;

const PNG_MAGIC = /^iVBORw0KGgo/;

describe("display items through wasmcell/e2b (Pyodide and JavaScript)", () => {
  let wasmcell: WasmcellSandbox;
  let sbx: Sandbox;
  before(async () => {
    wasmcell = await createSandbox();
    sbx = await Sandbox.create({ sandbox: wasmcell, pythonEngine: "pyodide", limits: { timeoutMs: 30_000 } });
  });
  after(async () => {
    await sbx.kill();
    await wasmcell.close();
  });

  test("IPython's display(): each item a Result, in order, then the main result", async () => {
    const seen: Result[] = [];
    const e = await sbx.runCode(
      `
      from IPython.display import display, HTML, Markdown
      display(HTML("<b>bold</b>"))
      display(Markdown("# title"))
      "last"
      `,
      { onResult: (r) => seen.push(r) },
    );
    assert.equal(e.error, undefined, e.error?.traceback);
    assert.deepEqual(
      e.results.map((r) => [r.html ?? r.markdown ?? r.text, r.isMainResult]),
      [
        ["<b>bold</b>", false],
        ["# title", false],
        // A plain last expression has no display item; its value is the main result, and a top-level
        // string is shown bare (docs/e2b.md: it may be a repr() already).
        ["last", true],
      ],
    );
    assert.equal(e.text, "last");
    assert.deepEqual(
      seen.map((r) => r.isMainResult),
      [false, false, true],
    );
  });

  test("the last expression's _repr_html_ is the main result's html", async () => {
    const e = await sbx.runCode(`
      class Table:
          def _repr_html_(self):
              return "<table><tr><td>1</td></tr></table>"
          def __repr__(self):
              return "Table()"
      Table()
      `);
    assert.equal(e.error, undefined, e.error?.traceback);
    const main = e.results.find((r) => r.isMainResult);
    assert.equal(main?.html, "<table><tr><td>1</td></tr></table>");
    assert.equal(e.text, "Table()");
    assert.deepEqual(main?.formats(), ["html"]);
  });

  test("JavaScript's display(value) is a Result", async () => {
    const e = await sbx.runCode("display(42); 'done'", { language: "js" });
    assert.equal(e.error, undefined, e.error?.traceback);
    assert.equal(e.results[0]?.text, "42");
    assert.equal(e.results[0]?.isMainResult, false);
    assert.equal(e.text, "done");
  });
});

describe("E2B's chart and data examples on native Python", NATIVE, () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create({ pythonEngine: "native", limits: { timeoutMs: 60_000 } });
  });
  after(() => sbx?.kill());

  test("the README example runs on the native tier", async () => {
    await sbx.runCode("x = 1");
    assert.equal((await sbx.runCode("x+=1; x")).text, "2");
    assert.equal(sbx.pythonEngine, "native");
  });

  test("E2B's display-data example: plt.show() gives results[0].png", async () => {
    const result = await sbx.runCode(`
        import matplotlib.pyplot as plt
        import numpy as np

        x = np.linspace(0, 20, 100)
        y = np.sin(x)

        plt.plot(x, y)
        plt.show()
        `);
    assert.equal(result.error, undefined, result.error?.traceback);
    const image = result.results[0];
    assert.match(image?.png ?? "", PNG_MAGIC);
    assert.ok(image?.text);
    assert.deepEqual(image?.extra, {});
  });

  test("E2B's data example: a DataFrame is an html table with text", async () => {
    const execution = await sbx.runCode(`
import pandas as pd
pd.DataFrame({"a": [1, 2, 3]})
`);
    assert.equal(execution.error, undefined, execution.error?.traceback);
    const result = execution.results[0];
    assert.equal(result?.isMainResult, true);
    assert.match(result?.html ?? "", /<table/);
    assert.match(result?.text ?? "", /a\n0\s+1/);
  });
});
