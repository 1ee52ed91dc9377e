// The Pyodide engine through the front door, with the full seal (seccomp in kill mode): values,
// output, errors, files, limits, the deadline ladder, the pool and sessions.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { truncationMarker } from "../../../src/kit/truncation.ts";
import { QueueFullError, SealUnavailableError } from "../../../src/core/errors.ts";
import { createEngine, type PyodideEngine } from "../../../src/engines/pyodide/index.ts";
import { createSandbox } from "../../../src/index.ts";
import { resolveOptions, resolveRequest } from "../../../src/options/index.ts";
import type { OutputChunk } from "../../../src/core/types.ts";
import { closePyodide, FULL, pyodideSandbox, runPy } from "../../helpers/pyodide.ts";

after(closePyodide);

describe("values and output", () => {
  it("returns the last expression as JSON data, prints go to stdout and stderr", async () => {
    const r = await runPy(
      "import sys\nprint('out')\nprint('err', file=sys.stderr)\n{'a': [1, 2.5, None, True], 'b': 'x'}",
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, { a: [1, 2.5, null, true], b: "x" });
    assert.equal(r.stdout, "out\n");
    assert.equal(r.stderr, "err\n");
    assert.equal(r.language, "python");
    assert.equal(r.stats.engine, "pyodide");
  });

  it("values that are not JSON data come back as their repr", async () => {
    const r = await runPy("(1, {1, 2}, 2**80, float('nan'), b'x')");
    assert.equal(r.ok && r.value, "(1, {1, 2}, 1208925819614629174706176, nan, b'x')");
  });

  it("a statement last, or None, gives undefined (the same contract as the native tier)", async () => {
    const r = await runPy("x = 1");
    assert.equal(r.ok, true);
    assert.equal(r.ok && r.value, undefined);
    const none = await runPy("None");
    assert.equal(none.ok && none.value, undefined);
  });

  it("top-level await works; asyncio.run says to use it instead", async () => {
    const a = await runPy("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'");
    assert.equal(a.ok && a.value, "awaited", JSON.stringify(!a.ok && a.error));
    const b = await runPy(
      "import asyncio\nasync def f():\n    await asyncio.sleep(0.01)\n    return 7\nasyncio.run(f())",
    );
    assert.equal(!b.ok && b.error.name, "RuntimeError");
    assert.match(!b.ok ? b.error.message : "", /use top-level 'await main\(\)' instead/);
    const c = await runPy("import asyncio\nasync def f():\n    await asyncio.sleep(0.01)\n    return 7\nawait f()");
    assert.equal(c.ok && c.value, 7);
  });

  it("onOutput receives chunks as they come", async () => {
    const sandbox = await pyodideSandbox();
    const chunks: OutputChunk[] = [];
    const r = await sandbox.run({
      language: "python",
      code: "import sys\nprint('a', flush=True)\nprint('b', file=sys.stderr, flush=True)",
      onOutput: (c) => chunks.push(c),
    });
    assert.equal(r.ok, true);
    assert.deepEqual(
      chunks.map((c) => [c.stream, c.text]),
      [
        ["stdout", "a\n"],
        ["stderr", "b\n"],
      ],
    );
  });

  it("output past maxOutputBytes is cut with a marker; the bytes attempted are counted", async () => {
    const r = await runPy("for i in range(1000):\n    print('x' * 99)\n'done'", { maxOutputBytes: 1000 });
    assert.equal(r.ok && r.value, "done");
    assert.equal(r.outputTruncated, true);
    assert.equal(r.stats.outputBytes, 100_000);
    assert.ok(r.stdout.startsWith("x".repeat(99) + "\n"));
    assert.ok(r.stdout.endsWith(truncationMarker(1000)));
    assert.ok(Buffer.byteLength(r.stdout) <= 1000 + truncationMarker(1000).length);
  });
});

describe("errors", () => {
  it("an exception has its name, message and a traceback of the user's frames only", async () => {
    const r = await runPy("def f(x):\n    return 1 / x\n\nf(0)");
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.error.kind, "runtime");
    assert.equal(r.error.name, "ZeroDivisionError");
    assert.equal(r.error.message, "division by zero");
    assert.equal(r.error.line, 2);
    assert.match(r.error.stack!, /^Traceback \(most recent call last\):\n {2}File "<code>", line 4, in <module>\n/);
    assert.match(r.error.stack!, /File "<code>", line 2, in f\n {4}return 1 \/ x\n/);
    assert.doesNotMatch(r.error.stack!, /harness|sidecar|pyodide|\/lib\/python/);
  });

  it("a syntax error has kind syntax with line and column", async () => {
    const r = await runPy("x = 1\ny = (2 +\n");
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.kind, "syntax");
    assert.equal(!r.ok && r.error.name, "SyntaxError");
    assert.equal(!r.ok && r.error.line, 2);
    assert.equal(typeof (!r.ok && r.error.column), "number");
  });

  it("deep recursion is a RecursionError, kind runtime (the guest could raise one itself)", async () => {
    const r = await runPy("def r(n):\n    return r(n + 1)\nr(0)");
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.equal(!r.ok && r.error.name, "RecursionError");
  });

  it("a result value over maxResultBytes is kind output_limit", async () => {
    const r = await runPy("'x' * 5000", { maxResultBytes: 1000 });
    assert.equal(!r.ok && r.error.kind, "output_limit");
  });

  it("exit(0) is a success, exit(3) a runtime failure", async () => {
    const a = await runPy("import sys\nprint('bye')\nsys.exit(0)");
    assert.equal(a.ok, true);
    assert.equal(a.stdout, "bye\n");
    const b = await runPy("raise SystemExit(3)");
    assert.equal(!b.ok && b.error.message, "the code called exit(3)");
  });
});

describe("files", () => {
  it("input files are in the working directory; new and changed files come back, unchanged inputs do not", async () => {
    const r = await runPy(
      "import os\nrows = open('data/in.csv').read().splitlines()\nopen('out.txt', 'w').write(str(len(rows)))\nos.mkdir('sub')\nopen('sub/b.bin', 'wb').write(bytes([0, 255]))\nsorted(os.listdir('.'))",
      {},
      { "data/in.csv": "a,b\n1,2\n", "same.txt": "unchanged" },
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, ["data", "out.txt", "same.txt", "sub"]);
    const files = Object.fromEntries(r.files.map((f) => [f.path, [Buffer.from(f.bytes).toString("hex"), f.mimeType]]));
    assert.deepEqual(files, {
      "out.txt": [Buffer.from("2").toString("hex"), "text/plain"],
      "sub/b.bin": ["00ff", "application/octet-stream"],
    });
  });

  it("files written after os.chdir into a subdirectory come back, under the run's working directory", async () => {
    const r = await runPy(
      "import os\nos.makedirs('sub/deeper')\nopen('top.txt', 'w').write('t')\nos.chdir('sub')\nopen('in-sub.txt', 'w').write('s')\nos.chdir('deeper')\nopen('deep.txt', 'w').write('d')",
    );
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.files.map((f) => [f.path, Buffer.from(f.bytes).toString()]).sort(), [
      ["sub/deeper/deep.txt", "d"],
      ["sub/in-sub.txt", "s"],
      ["top.txt", "t"],
    ]);
  });

  it("more files than maxFiles is kind output_limit", async () => {
    const r = await runPy("for i in range(5):\n    open(f'f{i}.txt', 'w').write('x')", { maxFiles: 3 });
    assert.equal(!r.ok && r.error.kind, "output_limit");
    assert.match(!r.ok ? r.error.message : "", /limits\.maxFiles/);
  });

  it("more bytes than maxFileBytes is kind output_limit", async () => {
    const r = await runPy("open('big.bin', 'wb').write(b'x' * 5000)", { maxFileBytes: 1000 });
    assert.equal(!r.ok && r.error.kind, "output_limit");
  });
});

describe("limits and the deadline ladder", () => {
  it("a pure-Python loop is interrupted at the deadline (kind timeout, KeyboardInterrupt) and the sidecar survives", async () => {
    const r = await runPy("while True:\n    pass", { timeoutMs: 300 });
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(!r.ok && r.error.name, "KeyboardInterrupt");
    const next = await runPy("'still here'");
    assert.equal(next.ok && next.value, "still here");
  });

  it("a guest that swallows KeyboardInterrupt is killed (kind timeout) and the pool replaces the sidecar", async () => {
    const r = await runPy(
      "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
      { timeoutMs: 300 },
    );
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(!r.ok && r.error.name, "TimeoutError");
    const next = await runPy("'replaced'");
    assert.equal(next.ok && next.value, "replaced");
  });

  it("time.sleep past the deadline (stuck in C) is killed: kind timeout", async () => {
    const r = await runPy("import time\ntime.sleep(30)", { timeoutMs: 300 });
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.ok(r.stats.wallMs < 10_000);
  });

  it("allocating past memoryMb is kind memory (MemoryError inside WASM), and the next run is fine", async () => {
    const r = await runPy("x = []\nwhile True:\n    x.append(bytearray(1 << 20))", { memoryMb: 96 });
    assert.equal(!r.ok && r.error.kind, "memory", JSON.stringify(r));
    const next = await runPy("len(bytearray(10 << 20))");
    assert.equal(next.ok && next.value, 10 << 20);
  });

  it("a smaller memoryMb holds after an earlier run grew the (unshrinkable) WASM memory", async () => {
    const big = await runPy("x = bytearray(150 << 20)\nlen(x)", { memoryMb: 256 });
    assert.equal(big.ok && big.value, 150 << 20, JSON.stringify(!big.ok && big.error));
    // Refused by malloc's footprint limit: growth up to the limit is seen (kind memory); one request
    // bigger than what is left leaves no trace the host can read, so it stays a runtime MemoryError.
    const grow = await runPy("x = []\nwhile True:\n    x.append(bytearray(1 << 20))", { memoryMb: 96 });
    assert.equal(!grow.ok && grow.error.kind, "memory", JSON.stringify(grow));
    const small = await runPy("x = bytearray(100 << 20)\nlen(x)", { memoryMb: 96 });
    assert.equal(!small.ok && small.error.kind, "runtime", JSON.stringify(small));
    assert.equal(!small.ok && small.error.name, "MemoryError");
  });

  it("aborting the signal ends the run as kind aborted", async () => {
    const sandbox = await pyodideSandbox();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const r = await sandbox.run({
      language: "python",
      code: "import time\ntime.sleep(30)",
      signal: controller.signal,
      limits: { timeoutMs: 10_000 },
    });
    assert.equal(!r.ok && r.error.kind, "aborted");
  });
});

describe("pool and sessions", () => {
  it("more waiting runs than maxQueue throw QueueFullError; the others complete", async () => {
    await using sandbox = await createSandbox({ python: { pool: 1, maxQueue: 1 }, seal: FULL });
    const slow = sandbox.run({ language: "python", code: "import time\ntime.sleep(0.5)\n1" });
    const queued = sandbox.run({ language: "python", code: "2" });
    await assert.rejects(sandbox.run({ language: "python", code: "3" }), QueueFullError);
    const [a, b] = await Promise.all([slow, queued]);
    assert.equal(a.ok && a.value, 1);
    assert.equal(b.ok && b.value, 2);
    // A run aborted while it waits in the queue is a result, not a throw.
    const controller = new AbortController();
    const busy = sandbox.run({ language: "python", code: "import time\ntime.sleep(0.3)" });
    const waiting = sandbox.run({ language: "python", code: "1", signal: controller.signal });
    controller.abort();
    const w = await waiting;
    assert.equal(!w.ok && w.error.kind, "aborted");
    await busy;
  });

  it("a session keeps state across runs; stateless runs beside it do not see it", async () => {
    const sandbox = await pyodideSandbox();
    await using session = await sandbox.session({ language: "python" });
    const a = await session.run({ code: "import json\ncounter = 41\njson.dumps = lambda *a, **k: 'patched'" });
    assert.equal(a.ok, true, JSON.stringify(!a.ok && a.error));
    const b = await session.run({ code: "counter += 1\n(counter, json.dumps(1))" });
    assert.deepEqual(b.ok && b.value, [42, "patched"]);
    const c = await runPy("'counter' in globals()");
    assert.equal(c.ok && c.value, false);
  });
});

describe("standby sidecars (python.standby)", () => {
  it("a sidecar killed at its deadline is replaced by the standby before its result comes back", async () => {
    const options = resolveOptions({ python: { pool: 1, standby: 1 }, seal: FULL });
    const engine = (await createEngine(options)) as PyodideEngine;
    try {
      const run = (code: string) =>
        engine.run(resolveRequest({ language: "python", code, limits: { timeoutMs: 300 } }, options));
      assert.equal((await run("1")).ok, true);
      while (engine.pool.standby < 1) await new Promise((r) => setTimeout(r, 20));
      const started = engine.sidecarsStarted;
      const r = await run(
        "while True:\n    try:\n        while True: pass\n    except KeyboardInterrupt:\n        pass",
      );
      assert.equal(!r.ok && r.error.kind, "timeout");
      // The killed sidecar's slot is already filled (by the standby); only the new standby is starting.
      const now = engine.pool.stats;
      assert.deepEqual([now.idle, now.busy, engine.pool.standby, now.starting], [1, 0, 0, 1]);
      const next = await run("'served by the standby'");
      assert.equal(next.ok && next.value, "served by the standby");
      while (engine.pool.standby < 1) await new Promise((r) => setTimeout(r, 20));
      assert.equal(engine.sidecarsStarted, started + 1);
    } finally {
      await engine.close();
    }
  });
});

describe("the seal", () => {
  it("a layer asked for that cannot be set up is SealUnavailableError at createSandbox, never a silent downgrade", async () => {
    // seccomp is installed by bubblewrap: asking for it without bubblewrap cannot be honoured.
    await assert.rejects(
      createSandbox({ python: { pool: 1 }, seal: { bubblewrap: false } }),
      (error: unknown) => error instanceof SealUnavailableError && error.layer === "seccomp",
    );
  });
});
