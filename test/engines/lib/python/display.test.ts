// The Python display module (src/engines/lib/python/wasmcell_display.py) on both tiers: display()
// as IPython has it, the IPython.display shim, the repr protocol, the last expression's rich repr as
// the main item, and (native, where matplotlib, pandas and PIL are installed) figures, DataFrames
// and images. Items arrive through onResult as they are shown, in order.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../src/index.ts";
import type { DisplayItem, EngineName, RunSuccess } from "../../../../src/core/types.ts";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ limits: { timeoutMs: 60_000 } });
});
after(async () => {
  await sandbox.close();
});

async function run(engine: EngineName, code: string): Promise<{ result: RunSuccess; seen: DisplayItem[] }> {
  const seen: DisplayItem[] = [];
  const result = await sandbox.run({ language: "python", engine, code, onResult: (item) => seen.push(item) });
  assert.ok(result.ok, JSON.stringify(result).slice(0, 1000));
  return { result, seen };
}

for (const engine of ["pyodide", "native"] as const) {
  describe(`Python display items (${engine})`, () => {
    it("display() shows each object in order, as it happens; IPython.display's objects import", async () => {
      const code = [
        "from IPython.display import display, HTML, Markdown, JSON, Image, SVG",
        "display(HTML('<b>one</b>'))",
        "print('between')",
        "display(Markdown('*two*'), JSON({'n': 3}))",
        "display(4)",
        "5",
      ].join("\n");
      const { result, seen } = await run(engine, code);
      assert.deepEqual(
        result.results.map((i) => i.data),
        [
          { "text/html": "<b>one</b>", "text/plain": "<IPython.core.display.HTML object>" },
          { "text/markdown": "*two*", "text/plain": "<IPython.core.display.Markdown object>" },
          { "application/json": { n: 3 }, "text/plain": "{'n': 3}" },
          { "text/plain": "4" },
        ],
      );
      assert.deepEqual(seen, result.results, "onResult saw the same items, in the same order");
      assert.equal(result.value, 5, "a plain last value stays the value, not an item");
      assert.equal(result.stdout, "between\n");
    });

    it("onResult hears an item while the run is still going", async () => {
      // The run never ends by itself: only an item delivered before its end can abort it.
      const controller = new AbortController();
      const r = await sandbox.run({
        language: "python",
        engine,
        code: "display('early')\nwhile True:\n    pass",
        limits: { timeoutMs: 60_000 },
        signal: controller.signal,
        onResult: () => controller.abort(),
      });
      assert.equal(!r.ok && r.error.kind, "aborted");
    });

    it("display is a builtin, as in a notebook, and takes raw MIME bundles", async () => {
      const { result } = await run(engine, "display({'text/html': '<i>x</i>', 'text/plain': 'x'}, raw=True)");
      assert.deepEqual(result.results, [{ data: { "text/html": "<i>x</i>", "text/plain": "x" }, main: false }]);
    });

    it("the _repr_*_ and _repr_mimebundle_ protocol; the last expression's rich repr is the main item", async () => {
      const code = [
        "class Table:",
        "    def _repr_html_(self): return '<table><tr><td>1</td></tr></table>'",
        "    def __repr__(self): return 'Table()'",
        "class Bundle:",
        "    def _repr_mimebundle_(self, include=None, exclude=None):",
        "        return {'text/markdown': '**b**', 'text/plain': 'B'}",
        "display(Bundle())",
        "Table()",
      ].join("\n");
      const { result } = await run(engine, code);
      assert.deepEqual(result.results, [
        { data: { "text/markdown": "**b**", "text/plain": "B" }, main: false },
        { data: { "text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "Table()" }, main: true },
      ]);
    });

    // The native tier keeps no sessions (each run is its own process).
    if (engine === "pyodide")
      it("a session and its fork keep showing items run after run", async () => {
        await using session = await sandbox.session({ language: "python", engine });
        const first = await session.run({
          language: "python",
          code: "class H:\n    def _repr_html_(self): return '<p>h</p>'\nh = H()",
        });
        assert.ok(first.ok);
        const second = await session.run({ language: "python", code: "display(h)\nh" });
        assert.ok(second.ok, JSON.stringify(second));
        assert.deepEqual(
          second.results.map((i) => [i.data["text/html"], i.main]),
          [
            ["<p>h</p>", false],
            ["<p>h</p>", true],
          ],
        );
        await using fork = await session.fork();
        const forked = await fork.run({ language: "python", code: "display(h)" });
        assert.ok(forked.ok, JSON.stringify(forked));
        assert.deepEqual(forked.results, [
          {
            data: { "text/html": "<p>h</p>", "text/plain": String(forked.results[0]?.data["text/plain"]) },
            main: false,
          },
        ]);
      });
  });
}

describe("Python display items: figures, DataFrames, images (native)", () => {
  it("plt.show() shows the figure as an image/png item: a real PNG", async () => {
    const { result } = await run("native", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()");
    assert.equal(result.results.length, 1);
    const png = Buffer.from(String(result.results[0]?.data["image/png"]), "base64");
    assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE);
    assert.ok(png.length > 1000);
    assert.match(String(result.results[0]?.data["text/plain"]), /^<Figure size \d+x\d+ with 1 Axes>$/);
    assert.equal(result.stderr, "", "no warning about a non-interactive backend");
  });

  it("figures left open at the end are shown; SVG on request", async () => {
    const code = [
      "import matplotlib.pyplot as plt",
      "from IPython.display import set_matplotlib_formats",
      "set_matplotlib_formats('png', 'svg')",
      "plt.figure(); plt.plot([1, 2])",
      "plt.figure(); plt.bar(['a'], [1])",
    ].join("\n");
    const { result } = await run("native", code);
    assert.equal(result.results.length, 2);
    for (const item of result.results) {
      assert.ok(String(item.data["image/png"]).startsWith("iVBORw0KGgo"));
      assert.match(String(item.data["image/svg+xml"]), /<svg/);
    }
  });

  it("a DataFrame as the last expression: a text/html table, text/plain and its data as JSON", async () => {
    const { result } = await run("native", "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})");
    const main = result.results.find((i) => i.main);
    assert.ok(main);
    assert.match(String(main.data["text/html"]), /<table[\s\S]*<th>a<\/th>[\s\S]*<\/table>/);
    assert.match(main.data["text/plain"], /a\s+b\n0\s+1\s+x/);
    assert.deepEqual(main.data["application/json"], {
      columns: ["a", "b"],
      index: [0, 1],
      data: [
        [1, "x"],
        [2, "y"],
      ],
    });
  });

  it("a Series too, and a PIL image as PNG", async () => {
    const code =
      "import pandas as pd\nfrom PIL import Image\ndisplay(Image.new('RGB', (4, 4), 'red'))\npd.Series([1, 2], name='n')";
    const { result } = await run("native", code);
    assert.ok(String(result.results[0]?.data["image/png"]).startsWith("iVBORw0KGgo"));
    assert.match(String(result.results[1]?.data["text/html"]), /<table/);
    assert.equal(result.results[1]?.main, true);
  });
});
