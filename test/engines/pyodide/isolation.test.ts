// Stateless runs never see each other. One sidecar (pool of 1) serves every run here, so what is
// tested is the in-place reset (memory, hiwire, file system, streams, timers), not a fresh process:
// the engine's start counter proves no sidecar was replaced, except where a run forces a recycle.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createEngine, type PyodideEngine } from "../../../src/engines/pyodide/index.ts";
import { resolveOptions, resolveRequest, type ResolvedOptions } from "../../../src/options/index.ts";
import type { RunResult } from "../../../src/core/types.ts";
import { FULL } from "../../helpers/pyodide.ts";

describe("stateless isolation (one sidecar, reset between runs)", () => {
  let engine: PyodideEngine;
  let options: ResolvedOptions;
  before(async () => {
    options = resolveOptions({ python: { pool: 1 }, seal: FULL });
    engine = (await createEngine(options)) as PyodideEngine;
  });
  after(() => engine.close());

  const run = (code: string): Promise<RunResult> =>
    engine.run(resolveRequest({ language: "python", code, limits: { timeoutMs: 10_000 } }, options));
  async function value(code: string): Promise<unknown> {
    const r = await run(code);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    return r.ok ? r.value : undefined;
  }

  // [what, the run that leaves it, the run that looks, what a fresh run sees (undefined: whatever the
  // first look saw)]
  const leaks: [string, string, string, unknown][] = [
    ["a global", "leaked = 42", "'leaked' in globals()", false],
    ["a builtin", "import builtins\nbuiltins.leaked = 1", "import builtins\nhasattr(builtins, 'leaked')", false],
    [
      "a sys.modules entry",
      "import sys, types\nsys.modules['leaky'] = types.ModuleType('leaky')",
      "import sys\n'leaky' in sys.modules",
      false,
    ],
    ["a newly imported module", "import colorsys", "import sys\n'colorsys' in sys.modules", false],
    [
      "a patched function on an imported module",
      "import json\njson.dumps = lambda *a, **k: 'pwned'",
      "import json\njson.dumps([1])",
      "[1]",
    ],
    [
      "a patched class attribute in a cached module",
      "import json\njson.JSONEncoder.leaked = 1",
      "import json\nhasattr(json.JSONEncoder, 'leaked')",
      false,
    ],
    ["a file in the working directory", "open('left.txt', 'w').write('x')", "import os\nos.listdir('.')", []],
    ["a file in /tmp", "open('/tmp/left.txt', 'w').write('x')", "import os\nos.listdir('/tmp')", []],
    [
      "a planted module on sys.path",
      "open('/lib/python3.14/site-packages/planted.py', 'w').write('x = 1')",
      "import importlib.util\nimportlib.util.find_spec('planted') is None",
      true,
    ],
    [
      "an environment variable",
      "import os\nos.environ['LEAKED'] = '1'\nos.putenv('LEAKED2', '1')",
      "import os\n('LEAKED' in os.environ, os.getenv('LEAKED2'))",
      [false, null],
    ],
    ["the working directory", "import os\nos.chdir('/tmp')", "import os\nos.getcwd()", "/home/pyodide"],
    ["the recursion limit", "import sys\nsys.setrecursionlimit(77)", "import sys\nsys.getrecursionlimit() != 77", true],
    [
      "an open file",
      "global_f = open('held.txt', 'w')\nimport os\nos.dup(1)",
      "import os\nsorted(os.listdir('/proc/self/fd'))",
      undefined,
    ],
  ];
  for (const [what, write, read, expected] of leaks) {
    it(`${what} does not survive into the next run`, async () => {
      const baseline = await value(read);
      if (expected !== undefined) assert.deepEqual(baseline, expected);
      const started = engine.sidecarsStarted;
      await value(write);
      assert.deepEqual(await value(read), baseline);
      assert.equal(engine.sidecarsStarted, started, "the same sidecar served both runs (reset, not recycle)");
    });
  }

  it("a background task the run left behind never runs during the next run", async () => {
    await value(
      "import asyncio\nasync def later():\n    await asyncio.sleep(0.05)\n    print('LEAKED')\nasyncio.get_event_loop().create_task(later())\n'started'",
    );
    const r = await run("import asyncio\nawait asyncio.sleep(0.2)\nprint('mine')");
    assert.equal(r.stdout, "mine\n");
  });

  it("a run's data in WASM memory is gone for the next run (ctypes scan)", async () => {
    // The marker is built at run time, so the code text itself does not contain it.
    await value(
      "m = bytes.fromhex('5741534d43454c4c') * 2 + b'-secret-' + bytes(range(48, 58))\nkeep = [m * 64 for _ in range(200)]\nlen(keep)",
    );
    const count = await value(
      "import ctypes, sys\nneedle = bytes.fromhex('5741534d43454c4c') * 2 + b'-secret-' + bytes(range(48, 58))\nheap = ctypes.string_at(0, 30 << 20)\nheap.count(needle)",
    );
    // The needle object of this run itself may appear once or twice; run one left 12 800 copies.
    assert.ok(typeof count === "number" && count < 4, `found ${String(count)}`);
  });

  it("random state differs between runs (reseeded after every reset)", async () => {
    const a = await value("import random\nrandom.random()");
    const b = await value("import random\nrandom.random()");
    assert.notEqual(a, b);
  });

  it("a run that modifies a file the interpreter was started with has it put back from the checkpoint, in place", async () => {
    const started = engine.sidecarsStarted;
    await value("open('/lib/python314.zip', 'r+b').write(b'XX')\n'tampered'");
    assert.equal(await value("open('/lib/python314.zip', 'rb').read(2) != b'XX'"), true);
    assert.equal(await value("import email.message\n'stdlib intact'"), "stdlib intact");
    assert.equal(engine.sidecarsStarted, started);
  });
});
