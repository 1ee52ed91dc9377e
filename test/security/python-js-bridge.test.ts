// Threat: guest Python reaches the JavaScript realm Pyodide runs in (`import js`, `pyodide_js`,
// `pyodide.code.run_js`, the FFI, any leftover JsProxy's `.constructor.constructor`) and from there
// the host: a shell, files, the network, other processes, secrets. Measured on this machine with the
// seed's in-process recipe, one line did it. Here the guest layer makes the easy paths unusable, and
// each seal layer around the sidecar is tested on its own by running a probe in the sidecar's place
// (same flags, binds and jail) — as if the guest already had the JS realm.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SealOptions } from "../../src/options/index.ts";
import { startListener, startVictim } from "../helpers/host.ts";
import { closePyodide, probeSeal, PY_FIND_JS, PY_JS_FUNCTION, PY_PROBE, runPy } from "../helpers/pyodide.ts";

describe("pyodide", () => {
  const secret = `hunter2-${Math.random().toString(36).slice(2)}`;
  let listener: Awaited<ReturnType<typeof startListener>>;
  let victim: ReturnType<typeof startVictim>;
  let hostDir: string;
  before(async () => {
    process.env.WASMCELL_TEST_SECRET_TOKEN = secret;
    listener = await startListener();
    victim = startVictim();
    hostDir = mkdtempSync(join(tmpdir(), "wasmcell-bridge-"));
  });
  after(async () => {
    delete process.env.WASMCELL_TEST_SECRET_TOKEN;
    victim.stop();
    await listener.close();
    rmSync(hostDir, { recursive: true, force: true });
    await closePyodide();
  });

  describe("guest layer (full seal around it)", () => {
    it("import js, pyodide_js internals, pyodide.code.run_js and pyodide.ffi are unusable", async () => {
      const r = await runPy(`${PY_PROBE}
def pjs():
    import pyodide_js
    return pyodide_js._module
def api():
    import pyodide_js
    return pyodide_js._api.scheduleCallback
{
  "import js": probe(lambda: __import__("js")),
  "from js import process": probe(lambda: exec("from js import process")),
  "pyodide_js._module": probe(pjs),
  "pyodide_js._api.scheduleCallback": probe(api),
  "run_js": probe(lambda: exec("from pyodide.code import run_js")),
  "pyodide.ffi": probe(lambda: __import__("pyodide.ffi")),
  "_pyodide_core": probe(lambda: __import__("_pyodide_core")),
  "importlib js": probe(lambda: __import__("importlib").import_module("js")),
  "gc.get_objects": probe(lambda: __import__("gc").get_objects()),
  "gc.get_referrers": probe(lambda: __import__("gc").get_referrers(probe)),
}`);
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.ok && r.value, {
        "import js": "ModuleNotFoundError",
        "from js import process": "ModuleNotFoundError",
        "pyodide_js._module": "AttributeError",
        "pyodide_js._api.scheduleCallback": "AttributeError",
        run_js: "ModuleNotFoundError",
        "pyodide.ffi": "ModuleNotFoundError",
        _pyodide_core: "ModuleNotFoundError",
        "importlib js": "ModuleNotFoundError",
        "gc.get_objects": "RuntimeError",
        "gc.get_referrers": "RuntimeError",
      });
    });

    it("pyodide.http (pyfetch) is the sandbox's own module: no JavaScript object anywhere behind it", async () => {
      // Everything reachable from the module's namespace, its functions' globals, closures and
      // defaults, and its classes' attributes: plain Python values only (no JsProxy type). The walk
      // stops at net.py's globals (__main__'s), walked on their own in
      // test/security/pyodide-bridge-realm-escape.test.ts.
      const v = await runPy(`${PY_FIND_JS}
import sys
from pyodide.http import pyfetch, FetchResponse
mod = sys.modules["pyodide.http"]
js, seen = find_js([mod], enter=[mod])
[js, pyfetch.__module__, seen > 20]`);
      assert.equal(v.ok, true, JSON.stringify(!v.ok && v.error));
      assert.deepEqual(v.ok && v.value, [[], "wasmcell_pyfetch", true]);
    });

    it("a JsProxy a guest still makes (through ctypes) cannot turn .constructor.constructor into code", async () => {
      const r = await runPy(`${PY_JS_FUNCTION}
try:
    fn.constructor.constructor("return globalThis.process")()
    outcome = "ESCAPED"
except Exception as e:
    outcome = str(e)
outcome`);
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.match(String(r.ok && r.value), /EvalError: Code generation from strings disallowed/);
    });

    it("a JS built-in changed through a JsProxy does not reach the next run (the sidecar retires)", async () => {
      const plant = await runPy(
        `${PY_JS_FUNCTION}fn.constructor.prototype.wasmcellPlanted = 'from run one'\nfn.constructor.prototype.wasmcellPlanted`,
      );
      assert.equal(plant.ok && plant.value, "from run one", JSON.stringify(plant));
      const look = await runPy(`${PY_JS_FUNCTION}getattr(fn.constructor.prototype, 'wasmcellPlanted', None)`);
      assert.equal(look.ok && look.value, undefined, JSON.stringify(look));
    });

    it("the environment holds no host secret and subprocess cannot start anything", async () => {
      const r = await runPy(`
import os, subprocess
try:
    subprocess.run(["/bin/sh", "-c", "id"])
    spawned = "ALLOWED"
except Exception as e:
    spawned = type(e).__name__
(sorted(os.environ), spawned)`);
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      const [envKeys, spawned] = (r.ok ? r.value : []) as [string[], string];
      assert.equal(spawned, "OSError");
      assert.ok(!envKeys.includes("WASMCELL_TEST_SECRET_TOKEN"));
      assert.ok(!JSON.stringify(r).includes(secret));
    });
  });

  // What code in the sidecar's JS realm gets, per seal configuration. Seccomp runs in the EPERM mode
  // here so every attempt reports its own outcome (the kill mode would stop at the first one).
  const configs: [string, SealOptions, Record<string, string>][] = [
    [
      "all layers",
      {},
      {
        child_process: "ERR_ACCESS_DENIED",
        fs_write_host: "ERR_ACCESS_DENIED",
        fs_read_passwd: "ERR_ACCESS_DENIED",
        net_connect: "ERR_ACCESS_DENIED",
        kill_host_process: "EPERM",
        worker_thread: "ERR_ACCESS_DENIED",
        env_secret: "ABSENT",
        eval: "EvalError",
      },
    ],
    [
      "bubblewrap + seccomp, permission model off",
      { nodePermissions: false },
      {
        child_process: "EPERM", // seccomp: clone without CLONE_THREAD
        fs_write_host: "ENOENT", // the host path does not exist in the jail
        fs_read_passwd: "ENOENT",
        net_connect: "EPERM", // seccomp: socket()
        kill_host_process: "EPERM",
        worker_thread: "ALLOWED", // a thread in the same jail, under the same filter
        env_secret: "ABSENT",
        eval: "EvalError",
      },
    ],
    [
      "permission model (+ uid drop) only, bubblewrap and seccomp off",
      { bubblewrap: false, seccomp: false },
      {
        child_process: "ERR_ACCESS_DENIED",
        fs_write_host: "ERR_ACCESS_DENIED",
        fs_read_passwd: "ERR_ACCESS_DENIED",
        net_connect: "ERR_ACCESS_DENIED", // Node ≥ 25 without --allow-net
        kill_host_process: "EPERM", // the victim belongs to root; the sidecar runs as nobody
        worker_thread: "ERR_ACCESS_DENIED",
        env_secret: "ABSENT",
        eval: "EvalError",
      },
    ],
    [
      "bubblewrap only",
      { seccomp: false, nodePermissions: false },
      {
        child_process: "ENOENT", // no /bin/sh in the jail
        fs_write_host: "ENOENT",
        fs_read_passwd: "ENOENT",
        net_connect: "ECONNREFUSED", // its own empty network namespace
        kill_host_process: "ESRCH", // its own pid namespace
        worker_thread: "ALLOWED",
        env_secret: "ABSENT",
        eval: "EvalError",
      },
    ],
  ];
  for (const [what, seal, expected] of configs) {
    it(`escaped into the sidecar's JS realm, ${what}: the host stays untouched`, async () => {
      const hostFile = join(hostDir, `pwned-${Object.keys(seal).join("-") || "all"}`);
      const before = listener.connections();
      const got = await probeSeal(seal, { port: listener.port, victimPid: victim.pid, hostFile });
      assert.deepEqual(got, expected);
      assert.equal(existsSync(hostFile), false);
      assert.equal(listener.connections(), before);
      assert.equal(victim.alive(), true);
      assert.ok(!JSON.stringify(got).includes(secret));
    });
  }

  it("control: with every layer off the same probe reaches the host (so the probe can fail)", async () => {
    const hostFile = join(hostDir, "pwned-control");
    const control = startVictim();
    const got = await probeSeal(
      { bubblewrap: false, seccomp: false, nodePermissions: false, dropPrivileges: false },
      { port: listener.port, victimPid: control.pid, hostFile },
    );
    control.stop();
    assert.match(got.child_process!, /^ALLOWED: "uid=/);
    assert.equal(got.fs_write_host, "ALLOWED");
    assert.equal(got.net_connect, 'ALLOWED: "connected"');
    assert.equal(existsSync(hostFile), true);
  });
});
