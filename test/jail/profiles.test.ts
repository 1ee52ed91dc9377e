// Each seccomp profile, validated with the KILL default on the real workload it was written for: a
// syscall missing from the allowlist shows up here as a SIGSYS death instead of a quiet EPERM later.
import assert from "node:assert/strict";
import { rmSync, writeFileSync, chmodSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { describe, it } from "node:test";
import { spawnJailed } from "../../src/jail/index.ts";
import { collect, runPython, TEST_SEAL } from "./helpers.ts";
import { jailReachableTempDir } from "../helpers/tmp.ts";

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
    assert.deepEqual(JSON.parse(r.stdout), {
      b: 0.6287,
      g: 71071,
      tz: "Europe/Paris",
      png: "89504e47",
      cb: 42,
      proc: "",
    });
  });

  it("covers the standard library's breadth: files, archives, threads, mmap, uuid, time zones, PIL, svg/pdf/jpg", async () => {
    const r = await runPython(SWEEP, {
      env: { MPLCONFIGDIR: "/tmp/.mpl" },
      workDir: "/tmp/work",
      memoryBytes: 512 << 20,
    });
    assert.equal(r.stderr, "");
    assert.equal(r.signal, null);
    assert.deepEqual(JSON.parse(r.stdout), {
      uuid: 36,
      uuid1: 36,
      cpu: [cpus().length, cpus().length],
      pool: 328350,
      mmap: "xxx",
      rusage: true,
      tz: "2024-06-02 01:00:00+09:00",
      fft: true,
      eig: true,
      rolling: 97,
      glob: ["df.csv"],
      files: ["df.csv", "df.json", "df.pkl", "g.gz", "h.jpg", "h.pdf", "h.svg", "h_gray.png", "z.zip"],
    });
  });
});

// A wide sweep of what analysis code does: each line exercises syscalls the numpy trace alone does not.
const SWEEP = String.raw`import tempfile, shutil, zipfile, gzip, bz2, lzma, hashlib, random, secrets, uuid, datetime, locale, os, time, resource, mmap, struct, pickle, csv, statistics, decimal, fractions, json, re, io, glob, pathlib, concurrent.futures, threading, multiprocessing, signal, xml.etree.ElementTree as ET, email, html, textwrap, itertools, functools, collections, heapq, bisect, math, cmath, array, base64, binascii, zlib, codecs, unicodedata, difflib, calendar, enum, dataclasses, typing, inspect, traceback, warnings, contextlib, weakref, copy, pprint, string, operator
import numpy as np, pandas as pd, matplotlib.pyplot as plt
from PIL import Image
out = {}
d = tempfile.mkdtemp(); p = os.path.join(d, "a.txt"); open(p, "w").write("x" * 1000)
shutil.copy(p, p + ".2"); shutil.copytree(d, d + "-copy"); shutil.rmtree(d + "-copy")
with zipfile.ZipFile("z.zip", "w") as z: z.write(p, "a.txt")
with gzip.open("g.gz", "wb") as g: g.write(b"x" * 10000)
out["uuid"] = len(str(uuid.uuid4())); out["uuid1"] = len(str(uuid.uuid1()))
out["cpu"] = (os.cpu_count(), multiprocessing.cpu_count())
with concurrent.futures.ThreadPoolExecutor(4) as ex: out["pool"] = sum(ex.map(lambda v: v * v, range(100)))
t = threading.Timer(0.01, lambda: None); t.start(); t.join()
with open(p, "r+b") as f:
    m = mmap.mmap(f.fileno(), 0); out["mmap"] = m[:3].decode(); m.close()
out["rusage"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
out["tz"] = str(pd.Timestamp("2024-06-01 12:00", tz="America/New_York").tz_convert("Asia/Tokyo"))
a = np.random.default_rng(0).normal(size=(200, 200)); out["fft"] = round(float(np.abs(np.fft.fft2(a)).mean()), 3) > 0
out["eig"] = len(np.linalg.eigvals(a)) == 200
df = pd.DataFrame({"a": range(100), "b": pd.date_range("2024-01-01", periods=100)})
df.to_csv("df.csv", index=False); df.to_json("df.json"); df.to_pickle("df.pkl")
out["rolling"] = float(df.a.rolling(5).mean().iloc[-1])
fig, ax = plt.subplots(); ax.hist(a.ravel(), bins=30); fig.savefig("h.svg"); fig.savefig("h.pdf"); fig.savefig("h.jpg")
Image.open("h.jpg").convert("L").save("h_gray.png")
signal.signal(signal.SIGUSR1, lambda *a: None); os.kill(os.getpid(), signal.SIGUSR1) if False else signal.raise_signal(signal.SIGUSR1)
out["glob"] = sorted(glob.glob("*.csv"))
out["files"] = sorted(os.listdir("."))
import json
print(json.dumps(out))
`;

describe("node-pyodide profile (kill default)", () => {
  it("runs Node with Pyodide: load, a Python run, stdout", async () => {
    const require = createRequire(import.meta.url);
    const pyodideDir = dirname(require.resolve("pyodide/package.json"));
    const dir = jailReachableTempDir("wasmcell-test-");
    chmodSync(dir, 0o755);
    const script = `${dir}/load.mjs`;
    writeFileSync(
      script,
      // Pyodide's NODEFS asks process.binding("constants") at load, which the permission model denies
      // (docs/seal.md pitfall 1): hand it the constants and nothing else.
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
        roBinds: [
          { host: pyodideDir, jail: "/sandbox/pyodide" },
          { host: script, jail: "/sandbox/load.mjs" },
        ],
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
