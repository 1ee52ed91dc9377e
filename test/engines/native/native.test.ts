// The native tier end to end: real numpy/pandas/matplotlib, the request and result shapes, every
// error kind, files in and out. Runs with the seccomp kill default, so a syscall missing from the
// python-native allowlist fails here.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { after, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import type { RunRequest } from "../../../src/core/types.ts";

let sandbox: Sandbox | undefined;
async function run(code: string, extra: Partial<RunRequest> = {}) {
  sandbox ??= await createSandbox({ python: { engine: "native" }, seal: { seccomp: "kill" } });
  return sandbox.run({ language: "python", code, limits: { timeoutMs: 20_000, memoryMb: 256 }, ...extra });
}

describe("native engine", () => {
  after(async () => sandbox?.close());

  it("a numpy/pandas workload, reading an input CSV and writing one back", async () => {
    const csv = "city,temp\nOslo,3\nRome,18\nOslo,5\nRome,22\n";
    const r = await run(
      `import numpy as np, pandas as pd
df = pd.read_csv("data/in.csv")
means = df.groupby("city").temp.mean()
means.to_csv("means.csv")
m = np.array([[2.0, 1.0], [1.0, 3.0]])
{"means": means.to_dict(), "det": round(float(np.linalg.det(m)), 6), "numpy": np.__version__}`,
      { files: { "data/in.csv": csv } },
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, { means: { Oslo: 4.0, Rome: 20.0 }, det: 5.0, numpy: "1.24.2" });
    assert.deepEqual(
      r.files.map((f) => [f.path, f.mimeType, Buffer.from(f.bytes).toString()]),
      [["means.csv", "text/csv", "city,temp\nOslo,4.0\nRome,20.0\n"]],
    );
    assert.equal(r.stats.engine, "native");
    assert.ok(
      r.stats.peakMemoryBytes! > 10 << 20,
      "peak memory is reported (cgroup peak, or the interpreter's maxrss)",
    );
  });

  it("a matplotlib figure saved as PNG comes back as a file", async () => {
    const r = await run(`import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
ax.plot([1, 2, 3], [2, 4, 1]); ax.set_title("round trip")
fig.savefig("plot.png")
import matplotlib; matplotlib.get_backend()`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    // wasmcell's display module is the backend (it draws with Agg): the figure left open is shown too.
    assert.equal(r.ok && r.value, "module://wasmcell_display");
    assert.equal(r.stderr, "");
    assert.equal(r.results.length, 1);
    assert.equal(r.files.length, 1);
    const png = r.files[0]!;
    assert.equal(png.path, "plot.png");
    assert.equal(png.mimeType, "image/png");
    assert.equal(Buffer.from(png.bytes.subarray(0, 8)).toString("hex"), "89504e470d0a1a0a");
    // IHDR: width and height in pixels (4 × 3 inches at 50 dpi)
    const ihdr = Buffer.from(png.bytes.subarray(16, 24));
    assert.deepEqual([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)], [200, 150]);
  });

  it("returns the last expression as data, or its repr; None and statements give undefined", async () => {
    const data = await run("{'a': [1, 2.5, None, True], 'b': 'é'}");
    assert.deepEqual(data.ok && data.value, { a: [1, 2.5, null, true], b: "é" });
    const repr = await run("import numpy as np\nnp.arange(3)");
    assert.equal(repr.ok && repr.value, "array([0, 1, 2])");
    const none = await run("x = 1");
    assert.equal(none.ok, true);
    assert.equal(none.ok && none.value, undefined);
    const printed = await run("print('hello')\nimport sys; print('warn', file=sys.stderr)");
    assert.deepEqual([printed.stdout, printed.stderr], ["hello\n", "warn\n"]);
  });

  it("error kinds: syntax with its line, runtime with a user-only traceback, stack, memory", async () => {
    const syntax = await run("x = 1\ny = (\n");
    assert.equal(!syntax.ok && syntax.error.kind, "syntax");
    assert.equal(!syntax.ok && syntax.error.name, "SyntaxError");
    assert.equal(!syntax.ok && syntax.error.line, 2);

    const runtime = await run("def f(x):\n    return 1 / x\nf(0)");
    assert.equal(!runtime.ok && runtime.error.kind, "runtime");
    assert.equal(!runtime.ok && runtime.error.name, "ZeroDivisionError");
    assert.equal(!runtime.ok && runtime.error.line, 2);
    const stack = !runtime.ok ? (runtime.error.stack ?? "") : "";
    assert.match(stack, /File "<code>", line 3, in <module>/);
    assert.match(stack, /File "<code>", line 2, in f/);
    assert.equal(stack.includes("driver.py") || stack.includes("harness.py"), false);

    const recursion = await run("def f(): return f()\nf()");
    assert.equal(!recursion.ok && recursion.error.kind, "runtime");
    assert.equal(!recursion.ok && recursion.error.name, "RecursionError");

    // Refused inside the process by the address-space limit: the host saw no kill, so it does not
    // claim `memory` (a guest can `raise MemoryError` too); the name says what happened.
    const memory = await run("b = bytearray(2 * 1024**3)", { limits: { memoryMb: 64 } });
    assert.equal(!memory.ok && memory.error.kind, "runtime");
    assert.equal(!memory.ok && memory.error.name, "MemoryError");
  });

  it("top-level await (asyncio) and sqlite3 in the working directory work", async () => {
    const r = await run(`import asyncio, sqlite3
await asyncio.sleep(0.01)
results = await asyncio.gather(*(asyncio.sleep(0.01, result=i) for i in range(3)))
db = sqlite3.connect("db.sqlite")
db.execute("create table t(x)"); db.executemany("insert into t values (?)", [(i,) for i in results]); db.commit()
db.execute("select sum(x) from t").fetchone()[0]`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.equal(r.ok && r.value, 3);
    assert.deepEqual(
      r.files.map((f) => f.path),
      ["db.sqlite"],
    );
  });

  it("files written after os.chdir into a subdirectory come back, under the run's working directory", async () => {
    const r = await run(`import os
os.makedirs("sub/deeper")
open("top.txt", "w").write("t")
os.chdir("sub")
open("in-sub.txt", "w").write("s")
os.chdir("deeper")
open("deep.txt", "w").write("d")
os.getcwd().endswith("sub/deeper")`);
    assert.equal(r.ok && r.value, true, JSON.stringify(r));
    assert.deepEqual(
      r.files.map((f) => [f.path, Buffer.from(f.bytes).toString()]),
      [
        ["top.txt", "t"],
        ["sub/in-sub.txt", "s"],
        ["sub/deeper/deep.txt", "d"],
      ],
    );
  });

  it("asyncio is loaded only for code with top-level await (it is most of a cold run's harness start-up)", async () => {
    const sync = await run("import sys\n['asyncio' in sys.modules, 'inspect' in sys.modules]");
    assert.deepEqual(sync.ok && sync.value, [false, false]);
    const awaited = await run("import sys\nasync def f():\n    return 'asyncio' in sys.modules\nawait f()");
    assert.equal(awaited.ok && awaited.value, true);
  });

  it("a caller's abort ends the run as kind aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await run("import time\ntime.sleep(30)", { signal: controller.signal });
    assert.equal(!r.ok && r.error.kind, "aborted");
  });

  it("streams output through onOutput", async () => {
    const chunks: { stream: string; text: string }[] = [];
    const r = await run("import sys\nfor i in range(3):\n    print(i)\nprint('e', file=sys.stderr)", {
      onOutput: (c) => chunks.push(c),
    });
    assert.equal(r.stdout, "0\n1\n2\n");
    assert.equal(
      chunks
        .filter((c) => c.stream === "stdout")
        .map((c) => c.text)
        .join(""),
      "0\n1\n2\n",
    );
    assert.equal(
      chunks
        .filter((c) => c.stream === "stderr")
        .map((c) => c.text)
        .join(""),
      "e\n",
    );
  });

  it("each run starts from nothing: modules patched and files left by a run are gone", async () => {
    await run("import json\njson.dumps = lambda *a, **k: 'patched'\nopen('left.txt', 'w').write('x')");
    const r = await run("import json, os\n[json.dumps(1), os.path.exists('left.txt')]");
    assert.deepEqual(r.ok && r.value, ["1", false]);
  });

  it("with bubblewrap and seccomp turned off on purpose it runs unjailed (uid drop and rlimits still on), files still round-trip", async () => {
    await using unjailed = await createSandbox({ seal: { bubblewrap: false, seccomp: false } });
    const r = await unjailed.run({
      language: "python",
      engine: "native",
      // The scratch is a fresh directory under TMPDIR (or /var/tmp when TMPDIR is private to root).
      code: `import os\nopen('out.txt', 'w').write(open('in.txt').read().upper())\n[os.path.exists('/etc/passwd'), os.getcwd().startswith((${JSON.stringify(`${realpathSync(tmpdir())}/wasmcell-`)}, '/var/tmp/wasmcell-'))]`,
      files: { "in.txt": "hi" },
    });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    // no mount namespace: the host's files are visible, which is what turning bubblewrap off means
    assert.deepEqual(r.ok && r.value, [true, true]);
    assert.deepEqual(
      r.files.map((f) => [f.path, Buffer.from(f.bytes).toString()]),
      [["out.txt", "HI"]],
    );
  });

  it("a host that forgets close() still exits, and close() reaps the pre-started jail", async () => {
    const sandboxUrl = new URL("../../../src/index.ts", import.meta.url).href;
    for (const closeIt of [false, true]) {
      const script = `import { createSandbox } from ${JSON.stringify(sandboxUrl)};
const s = await createSandbox({ python: { engine: "native" } });
const r = await s.run({ language: "python", code: "6 * 7" });
process.stdout.write(String(r.ok && r.value));
await new Promise((res) => setTimeout(res, 300));
${closeIt ? "await s.close();" : ""}`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (err += c.toString()));
      const code = await new Promise((r) => child.once("close", r));
      assert.deepEqual([code, out, err], [0, "42", ""], `closeIt=${closeIt}`);
    }
  });
});
