// Threat: what a run displays is the guest's data, and a client renders it (an MCP client shows an
// image, a browser an HTML table). A guest that sends a huge item, a MIME type off the list, a "PNG"
// that is not base64, a repr that raises, or ten thousand tiny items must not get any of it past the
// host unbounded or unchecked. On every engine, through the runtime's own display() and, on the
// Python tiers, past it (the guest owns its interpreter and writes its own frames to the host: the
// native driver's result pipe, the Pyodide sidecar's display device): each case ends bounded, with
// its own message. A repr that raises is the guest's bug, not an attack: it falls back to text/plain
// with a line on stderr and the run succeeds.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { DisplayItem, EngineName, Language, RunResult } from "../../src/core/types.ts";

const LIMITS = { timeoutMs: 60_000, maxResults: 20, maxDisplayItemBytes: 2000, maxDisplayBytes: 8000 };

interface Tier {
  engine: EngineName;
  language: Language;
  /** Code that sends one raw item (JSON text) past the runtime's display code, or undefined (JS: none). */
  raw?: (json: string) => string;
  huge: string;
  offList: string;
  notBase64: string;
  raising: string;
  many: string;
}

const bypass = {
  native: (json: string) => `import os\nos.write(4, (${json} + "\\n").encode())`,
  pyodide: (json: string) =>
    `import os\nfd = os.open("/dev/wasmcell-display", os.O_WRONLY)\nos.write(fd, (${json}).encode())\nos.close(fd)`,
};

const PYTHON = {
  language: "python" as const,
  huge: `from IPython.display import display, HTML\ndisplay(HTML("x" * 5000))`,
  offList: `display({"text/plain": "x", "application/x-evil": "y"}, raw=True)\nprint("done")`,
  notBase64: `class P:\n    def _repr_png_(self):\n        return "not base64!"\n    def __repr__(self):\n        return "x"\ndisplay(P())`,
  raising: `class R:\n    def _repr_html_(self):\n        raise ValueError("boom")\n    def __repr__(self):\n        return "R()"\nR()\ndisplay(R())\n"ok"`,
  many: `for i in range(10_000):\n    display(i)`,
};

/** JavaScript: the guest realm's display() is the only way out, and the host parses what it hands over. */
const JAVASCRIPT = {
  language: "javascript" as const,
  huge: `display({ "text/html": "x".repeat(5000) }, { raw: true })`,
  offList: `try { display({ "text/plain": "x", "application/x-evil": "y" }, { raw: true }) } catch (e) { console.error(String(e)) }\ndisplay("x")`,
  notBase64: `try { display({ "text/plain": "x", "image/png": "not base64!" }, { raw: true }) } catch (e) { console.error(String(e)) }\ndisplay("x")`,
  raising: `const v = { [Symbol.for("Jupyter.display")]() { throw new Error("boom") } };\ntry { display(v) } catch (e) { console.error(String(e)) }\ndisplay("R()")\n"ok"`,
  many: `for (let i = 0; i < 10000; i++) display(i)`,
};

const TIERS: Tier[] = [
  { engine: "quickjs", ...JAVASCRIPT },
  { engine: "native", ...PYTHON, raw: (j) => bypass.native(`'{"display":' + ${j} + '}'`) },
  { engine: "pyodide", ...PYTHON, raw: (j) => bypass.pyodide(j) },
];

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ limits: LIMITS });
});
after(async () => {
  await sandbox.close();
});

async function run(tier: Tier, code: string): Promise<{ result: RunResult; seen: DisplayItem[] }> {
  const seen: DisplayItem[] = [];
  const result = await sandbox.run({
    language: tier.language,
    engine: tier.engine,
    code,
    onResult: (item) => seen.push(item),
  });
  return { result, seen };
}

function failure(result: RunResult): { kind: string; name: string; message: string; limit?: string } {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result).slice(0, 300)}`);
  return result.ok ? { kind: "", name: "", message: "" } : result.error;
}

for (const tier of TIERS) {
  describe(`hostile display bundles (${tier.engine})`, () => {
    it("a huge item: output_limit naming maxDisplayItemBytes, nothing of it shown", async () => {
      const { result, seen } = await run(tier, tier.huge);
      const e = failure(result);
      assert.equal(e.kind, "output_limit");
      assert.equal(e.limit, "maxDisplayItemBytes");
      assert.match(e.message, /over the 2000-byte limit \(limits\.maxDisplayItemBytes\)/);
      assert.equal(seen.length, 0);
      assert.equal(result.results.length, 0);
    });

    it("ten thousand tiny items: output_limit naming maxResults after the first 20", async () => {
      const { result, seen } = await run(tier, tier.many);
      const e = failure(result);
      assert.equal(e.limit, "maxResults");
      assert.match(e.message, /more than 20 items \(limits\.maxResults\)/);
      assert.equal(seen.length, 20);
      assert.equal(result.results.length, 20);
    });

    // Python leaves the bad part out and says so; JavaScript's display() throws a TypeError the
    // guest can catch. Either way nothing unchecked is shown and the run goes on.
    const js = tier.language === "javascript";
    it("a MIME type off the list is not shown, and the run is told", async () => {
      const { result } = await run(tier, tier.offList);
      assert.ok(result.ok, JSON.stringify(result));
      assert.deepEqual(result.results, [{ data: { "text/plain": "x" }, main: false }]);
      assert.match(
        result.stderr,
        js
          ? /TypeError: display: .*MIME type "application\/x-evil" is not one the host returns/
          : /application\/x-evil.*left out/,
      );
    });

    it("a PNG that is not base64 is not shown, and the run is told", async () => {
      const { result } = await run(tier, tier.notBase64);
      assert.ok(result.ok, JSON.stringify(result));
      assert.deepEqual(result.results, [{ data: { "text/plain": "x" }, main: false }]);
      assert.match(
        result.stderr,
        js
          ? /TypeError: display: .*image\/png value is not base64/
          : /_repr_png_: its image\/png value is not base64; left out/,
      );
    });

    it("a raising repr falls back to text/plain with a line on stderr, never a failed run", async () => {
      const { result } = await run(tier, tier.raising);
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.value, "ok");
      assert.deepEqual(result.results, [{ data: { "text/plain": "R()" }, main: false }]);
      assert.match(
        result.stderr,
        js ? /Error: boom/ : /R\._repr_html_ raised ValueError: boom; showing the other formats/,
      );
    });

    const raw = tier.raw;
    if (!raw) return;
    describe("past the runtime's display code, straight to the host", () => {
      const item = (data: Record<string, unknown>) => JSON.stringify(JSON.stringify({ data }));
      it("a MIME type off the list: refused, naming it", async () => {
        const e = failure((await run(tier, raw(item({ "text/plain": "x", "application/x-evil": "y" })))).result);
        assert.equal(e.name, "DisplayError");
        assert.match(e.message, /MIME type "application\/x-evil" is not one the host returns/);
      });

      it("a PNG that is not base64: refused, saying so", async () => {
        const e = failure((await run(tier, raw(item({ "text/plain": "x", "image/png": "not base64!" })))).result);
        assert.match(e.message, /image\/png value is not base64/);
      });

      it("a PNG that is base64 of something else: refused, saying so", async () => {
        const gif = Buffer.from("GIF89a<script>").toString("base64");
        const e = failure((await run(tier, raw(item({ "text/plain": "x", "image/png": gif })))).result);
        assert.match(e.message, /does not start with the image\/png signature/);
      });

      it("no text/plain: refused", async () => {
        const e = failure((await run(tier, raw(item({ "text/html": "<b>" })))).result);
        assert.match(e.message, /it has no text\/plain/);
      });

      it("a huge item: output_limit naming maxDisplayItemBytes", async () => {
        const { result, seen } = await run(tier, raw(`'{"data": {"text/plain": "' + "x" * 500_000 + '"}}'`));
        const e = failure(result);
        assert.equal(e.limit, "maxDisplayItemBytes");
        assert.equal(seen.length, 0);
      });

      it("ten thousand tiny items: output_limit naming maxResults, 20 shown", async () => {
        const loop = `for i in range(10_000):\n    ${raw(`'{"data": {"text/plain": "i"}}'`).replaceAll("\n", "\n    ")}`;
        const { result, seen } = await run(tier, loop);
        assert.equal(failure(result).limit, "maxResults");
        assert.equal(seen.length, 20);
      });
    });
  });
}
