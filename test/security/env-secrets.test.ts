// Threat: guest code reads secrets from the host's environment (API keys, tokens).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("native", () => {
  const secret = `hunter2-${randomBytes(8).toString("hex")}`;
  process.env.WASMCELL_TEST_SECRET_TOKEN = secret;
  after(async () => {
    delete process.env.WASMCELL_TEST_SECRET_TOKEN;
    await closeNative();
  });

  it("the guest's environment is exactly the jail's few variables; the secret appears nowhere", async () => {
    const r = await runNative(`${PROBES}
import sys
print(dict(os.environ)); print(dict(os.environ), file=sys.stderr)
open("env.txt", "w").write(repr(dict(os.environ)))
{
  "env": dict(os.environ),
  "proc_self": probe(lambda: open("/proc/self/environ", "rb").read()),
  "proc_1": probe(lambda: open("/proc/1/environ", "rb").read()),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      env: {
        PATH: "/usr/bin:/bin",
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
        TZ: "UTC",
        HOME: "/tmp/work",
        MPLBACKEND: "module://wasmcell_display",
        MPLCONFIGDIR: "/tmp/.matplotlib",
        OPENBLAS_NUM_THREADS: "1",
        PWD: "/tmp/work",
      },
      proc_self: "FileNotFoundError:ENOENT",
      proc_1: "FileNotFoundError:ENOENT",
    });
    const everything = [
      r.stdout,
      r.stderr,
      JSON.stringify(r.value),
      ...r.files.map((f) => Buffer.from(f.bytes).toString()),
    ].join("\n");
    assert.ok(everything.includes("MPLBACKEND"), "the probe really printed the environment");
    assert.equal(everything.includes(secret), false);
    assert.equal(everything.includes("WASMCELL_TEST_SECRET_TOKEN"), false);
  });
});

describe("pyodide", () => {
  const secret = `hunter2-${randomBytes(8).toString("hex")}`;
  after(async () => {
    delete process.env.WASMCELL_TEST_SECRET_TOKEN_PY;
    await closePyodide();
  });

  it("the guest sees Pyodide's fixed environment only; the host secret appears in no output or file", async () => {
    process.env.WASMCELL_TEST_SECRET_TOKEN_PY = secret;
    const r = await runPy(
      "import os, sys\nprint(dict(os.environ))\nprint(dict(os.environ), file=sys.stderr)\nopen('env.txt', 'w').write(repr(dict(os.environ)))\nsorted(os.environ)",
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, [
      "HOME",
      "LANG",
      "LD_LIBRARY_PATH",
      "LOGNAME",
      "MPLBACKEND",
      "PATH",
      "PWD",
      "PYTHONINSPECT",
      "USER",
      "_",
    ]);
    const everything = JSON.stringify(r) + r.files.map((f) => Buffer.from(f.bytes).toString()).join("");
    assert.ok(!everything.includes(secret));
    assert.ok(!everything.includes("WASMCELL_TEST_SECRET_TOKEN_PY"));
  });
});
