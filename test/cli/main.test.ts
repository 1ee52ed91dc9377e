// The `wasmcell` command as a user runs it: a child process, real engines, exit codes, --json, files.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runNode, type Ran } from "../helpers/process.ts";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

function cli(args: string[], options: { stdin?: string; cwd?: string } = {}): Promise<Ran> {
  return runNode([MAIN, ...args], options);
}

describe("wasmcell CLI", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wasmcell-cli-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe("bad usage exits 2 and names the problem", () => {
    const cases: [string[], RegExp][] = [
      [["run", "--nope", "-e", "1"], /Unknown option '--nope'/],
      [["run", "--timeout-ms", "abc", "-e", "1"], /--timeout-ms must be a positive whole number, got "abc"/],
      [["run", "--memory-mb", "0", "-e", "1"], /--memory-mb must be a positive whole number, got "0"/],
      [["run", "--lang", "ruby", "-e", "1"], /--lang must be one of .*got "ruby"/],
      [["run", "does-not-exist.js"], /cannot read does-not-exist\.js: no such file/],
      [["run", "--file", "missing.csv", "-e", "1"], /--file missing\.csv: cannot read missing\.csv: no such file/],
      [["run"], /nothing to run/],
      [["run", "--engine", "native", "-e", "1"], /--engine native runs Python, but the language is javascript/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["mcp", "--http", "--host", "0.0.0.0", "--port", "0"], /not a loopback address/],
      [
        ["mcp", "--session-name", "agent"],
        /--session-name names a stdio server's stored session: it needs --session-store/,
      ],
      [
        ["mcp", "--session-lease-ms", "500"],
        /--session-lease-ms and --session-wait-ms need --session-store or --redis/,
      ],
      [["mcp", "--http", "--session-store", "/tmp/s"], /--session-store stores --session sessions: add --session/],
      [
        ["mcp", "--http", "--session", "--session-store", "/tmp/s", "--redis", "redis://127.0.0.1:1"],
        /--session-store and --redis .* pick one/,
      ],
      [["mcp", "--http", "--session", "--redis", "redis://127.0.0.1:1"], /--session needs WASMCELL_SESSION_KEY/],
      [
        ["mcp", "--http", "--session-lease-ms", "500"],
        /--session-lease-ms and --session-wait-ms need --session-store or --redis/,
      ],
      [["mcp", "--http", "--session", "--stateless"], /add --redis URL \(no --stateless needed\)/],
      [["mcp", "--python-pool", "0"], /--python-pool must be a positive whole number, got "0"/],
      [["mcp", "--python-standby", "9"], /--python-standby must be at most 8, got 9/],
      [
        ["worker", "--redis", "redis://127.0.0.1:1", "--python-standby", "x"],
        /--python-standby must be a positive whole number/,
      ],
    ];
    for (const [args, expected] of cases) {
      test(args.join(" "), async () => {
        const r = await cli(args);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, expected);
        assert.equal(r.stdout, "");
      });
    }

    test("an unknown extension asks for --lang", async () => {
      const file = join(dir, "script.rb");
      await writeFile(file, "puts 1");
      const r = await cli(["run", file]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /cannot tell the language of .*script\.rb.*pass --lang/);
    });

    test("with --json, still exactly one JSON object on stdout", async () => {
      const r = await cli(["run", "--json", "--timeout-ms", "-5", "-e", "1"]);
      assert.equal(r.code, 2);
      const out = JSON.parse(r.stdout) as { ok: boolean; error: { kind: string; message: string } };
      assert.equal(out.ok, false);
      assert.equal(out.error.kind, "usage");
    });
  });

  test("doctor: a readable report, or one JSON object; exit 0 only when every engine is available", async () => {
    const json = await cli(["doctor", "--json"]);
    const report = JSON.parse(json.stdout) as {
      engines: { engine: string; available: boolean }[];
      layers: { layer: string }[];
    };
    assert.deepEqual(report.engines.map((e) => e.engine).sort(), ["native", "pyodide", "quickjs"]);
    assert.ok(report.layers.some((l) => l.layer === "seccomp"));
    assert.equal(json.code, report.engines.every((e) => e.available) ? 0 : 1);
    const text = await cli(["doctor"]);
    assert.match(text.stdout, /^engines:\n {2}(ok|no) {2}quickjs/m);
    assert.match(text.stdout, /^seal layers:$/m);
  });

  test("success: exit 0, the value printed after the code's own output", async () => {
    const r = await cli(["run", "-e", "console.log('hi'); 6 * 7"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hi\n42\n");
  });

  test("guest failure: exit 1 and a clear error line", async () => {
    const r = await cli(["run", "-e", "null.x"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^wasmcell: runtime error: TypeError: /m);
  });

  test("--json: one object with ok, value (non-JSON values tagged), stdout, stderr, stats, files", async () => {
    const r = await cli([
      "run",
      "--json",
      "-e",
      "console.log('a'); console.error('b'); ({ big: 10n, m: new Map([[1, 2]]), u: undefined, n: NaN })",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 1);
    const out = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(out.ok, true);
    assert.equal(out.language, "javascript");
    assert.deepEqual(out.value, {
      big: { $type: "bigint", value: "10" },
      m: { $type: "Map", entries: [[1, 2]] },
      u: { $type: "undefined" },
      n: { $type: "number", value: "NaN" },
    });
    assert.equal(out.stdout, "a\n");
    assert.equal(out.stderr, "b\n");
    assert.equal((out.stats as { engine: string }).engine, "quickjs");
    assert.equal(typeof (out.stats as { wallMs: number }).wallMs, "number");
    assert.deepEqual(out.files, []);
  });

  test("--json failure: error.kind/name/message and exit 1; a timeout is kind timeout", async () => {
    const r = await cli(["run", "--json", "--timeout-ms", "200", "-e", "while (true) {}"]);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { ok: boolean; error: { kind: string; name: string; message: string } };
    assert.equal(out.ok, false);
    assert.equal(out.error.kind, "timeout");
    assert.equal(typeof out.error.message, "string");
  });

  test("TypeScript from a .ts file, and code from stdin", async () => {
    const file = join(dir, "t.ts");
    await writeFile(file, "const n: number = 2;\nn ** 10");
    assert.equal((await cli(["run", file])).stdout, "1024\n");
    const r = await cli(["run", "--lang", "ts", "-"], { stdin: "const s: string = 'typed'; s" });
    assert.equal(r.stdout, "'typed'\n");
  });

  test("Python: .py inferred, --file in, --out-dir out", async () => {
    const input = join(dir, "numbers.txt");
    await writeFile(input, "1\n2\n3\n");
    const script = join(dir, "sum.py");
    await writeFile(
      script,
      "import os\ntotal = sum(int(x) for x in open('numbers.txt'))\nos.makedirs('out', exist_ok=True)\nopen('out/total.txt', 'w').write(str(total))\nprint('summed')\ntotal",
    );
    const outDir = join(dir, "results");
    const r = await cli(["run", script, "--file", input, "--out-dir", outDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "summed\n6\n");
    assert.match(r.stderr, /wrote .*total\.txt/);
    assert.equal(await readFile(join(outDir, "out", "total.txt"), "utf8"), "6");
  });

  test("--engine native: a matplotlib plot comes back as a PNG in --out-dir", async () => {
    const script = join(dir, "plot.py");
    await writeFile(
      script,
      "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.savefig('plot.png')\n'saved'",
    );
    const outDir = join(dir, "plots");
    const r = await cli(["run", "--engine", "native", "--json", script, "--out-dir", outDir]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = JSON.parse(r.stdout) as {
      value: string;
      stats: { engine: string };
      files: { path: string; mimeType: string; writtenTo: string }[];
    };
    assert.equal(out.value, "saved");
    assert.equal(out.stats.engine, "native");
    assert.deepEqual(
      out.files.map((f) => [f.path, f.mimeType, f.writtenTo]),
      [["plot.png", "image/png", join(outDir, "plot.png")]],
    );
    assert.deepEqual([...(await readFile(join(outDir, "plot.png"))).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });

  test("display items: text/plain printed in order, their other types written to --out-dir, listed by --json", async () => {
    const code = [
      "from IPython.display import display, HTML",
      "print('first')",
      "display(HTML('<b>bold</b>'))",
      "class T:",
      "    def _repr_markdown_(self): return '*t*'",
      "    def __repr__(self): return 'T()'",
      "T()",
    ].join("\n");
    const outDir = join(dir, "shown");
    const r = await cli(["run", "--lang", "python", "-e", code, "--out-dir", outDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "first\n<IPython.core.display.HTML object>\nT()\n");
    assert.match(r.stderr, /wrote .*display-1\.html \(text\/html, 11 B\)/);
    assert.equal(await readFile(join(outDir, "display-1.html"), "utf8"), "<b>bold</b>");
    assert.equal(await readFile(join(outDir, "display-2.md"), "utf8"), "*t*");
    const j = await cli(["run", "--json", "--lang", "python", "-e", code, "--out-dir", outDir]);
    const out = JSON.parse(j.stdout) as {
      results: { data: Record<string, unknown>; main: boolean; writtenTo?: object }[];
    };
    assert.deepEqual(
      out.results.map((i) => [i.data["text/plain"], i.main, Object.keys(i.writtenTo ?? {})]),
      [
        ["<IPython.core.display.HTML object>", false, ["text/html"]],
        ["T()", true, ["text/markdown"]],
      ],
    );
  });

  test("--json lists returned files with size and mime type", async () => {
    const r = await cli(["run", "--json", "--lang", "python", "-e", "open('a.csv', 'w').write('x,y\\n1,2\\n')"]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { files: { path: string; size: number; mimeType: string }[] };
    assert.deepEqual(out.files, [{ path: "a.csv", size: 8, mimeType: "text/csv" }]);
  });

  test("--allow grants a host; --verbose prints each refusal on stderr", async () => {
    const { startHttpServer } = await import("../helpers/http.ts");
    const server = await startHttpServer();
    try {
      const code = `const a = await (await fetch("${server.origin}/hello")).text();
let b; try { await fetch("http://127.0.0.1:1/") } catch (e) { b = e.message }
console.log(a, b)`;
      const r = await cli(["run", "--allow", `127.0.0.1:${server.port}`, "--verbose", "-e", code]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /hello network: 127\.0\.0\.1:1 refused: not in the allowlist/);
      assert.match(r.stderr, /wasmcell \[quickjs\] egress denied: GET 127\.0\.0\.1:1 \(not-allowed\)/);
      const none = await cli(["run", "-e", "typeof fetch"]);
      assert.match(none.stdout, /undefined/);
    } finally {
      await server.close();
    }
  });
});
