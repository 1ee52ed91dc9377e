// Each seccomp profile, validated with the KILL default on the real workload it was written for: a
// syscall missing from the allowlist shows up here as a SIGSYS death instead of a quiet EPERM later.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { describe, it } from "node:test";
import { spawnJailed } from "../../src/jail/index.ts";
import { collect, runPython, TEST_SEAL } from "./helpers.ts";

describe("python-native profile (kill default)", () => {
  it("imports numpy, pandas and matplotlib, uses threads, ctypes callbacks, tmpfs files, and saves a PNG", async () => {
    const code = `
import numpy as np, pandas as pd, os, threading, ctypes, json, platform
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
a = np.arange(90000, dtype=float).reshape(300, 300) / 1e4
b = a @ a.T
df = pd.DataFrame({"x": np.arange(1000), "y": np.arange(1000) % 7})
g = df.groupby("y").x.sum()
ts = pd.Timestamp("2020-01-01", tz="Europe/Paris")
fig, ax = plt.subplots(); ax.plot(df.x, df.y); ax.set_title("t"); fig.savefig("out.png")
threads = [threading.Thread(target=lambda: sum(range(10000))) for _ in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda v: v + 1)
print(json.dumps({"b": round(float(b[1, 1]), 4), "g": int(g[0]), "tz": str(ts.tz), "png": open("out.png", "rb").read()[:4].hex(),
  "cb": cb(41), "proc": platform.processor()}))`;
    const r = await runPython(code, { env: { MPLCONFIGDIR: "/tmp/.mpl" } });
    assert.equal(r.stderr, "");
    assert.equal(r.signal, null);
    assert.equal(r.code, 0);
    // platform.processor() vforks `uname -p`: EPERM, so it answers "".
    assert.deepEqual(JSON.parse(r.stdout), { b: 0.6287, g: 71071, tz: "Europe/Paris", png: "89504e47", cb: 42, proc: "" });
  });
});

describe("node-pyodide profile (kill default)", () => {
  it("runs Node with Pyodide: load, a Python run, stdout", async () => {
    const require = createRequire(import.meta.url);
    const pyodideDir = dirname(require.resolve("pyodide/package.json"));
    const dir = mkdtempSync(`${tmpdir()}/wasmcell-test-`);
    chmodSync(dir, 0o755);
    const script = `${dir}/load.mjs`;
    writeFileSync(
      script,
      // Pyodide's NODEFS asks process.binding("constants") at load, which the permission model denies
      // (sealing.md pitfall 1): hand it the constants and nothing else.
      `import fs from "node:fs"; import os from "node:os";
process.binding = (name) => { if (name === "constants") return { fs: fs.constants, os: os.constants }; throw new Error("denied"); };
const { loadPyodide } = await import("/sandbox/pyodide/pyodide.mjs");
const py = await loadPyodide({ indexURL: "/sandbox/pyodide/" });
console.log(py.runPython("import sys\\nsum(i * i for i in range(1000)), sys.version_info[0]").toJs().join(","));`,
    );
    chmodSync(script, 0o644);
    try {
      const jail = await spawnJailed({
        executable: process.execPath,
        jailExecutable: "/sandbox/bin/node",
        args: ["--permission", "--allow-fs-read=/sandbox/", "/sandbox/load.mjs"],
        roBinds: [{ host: pyodideDir, jail: "/sandbox/pyodide" }, { host: script, jail: "/sandbox/load.mjs" }],
        seccompProfile: "node-pyodide",
        seal: TEST_SEAL,
        rlimits: { openFiles: 64 },
        wallClockMs: 60_000,
      });
      const r = await collect(jail);
      assert.equal(r.signal, null, r.stderr);
      assert.equal(r.stderr, "");
      assert.equal(r.stdout, "332833500,3\n");
      assert.equal(r.code, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
