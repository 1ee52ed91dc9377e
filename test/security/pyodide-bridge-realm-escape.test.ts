// Threat: guest Python finds the sidecar's host-bridge functions (gated fetch, the event loop's idle
// wait) through ordinary module globals, calls `.new()` on one, and the JavaScript error that comes
// back (a JsException holding the live error object) leads by its constructor chain to the realm's
// `Function` and `Error`. With a Python callable as `Error.prepareStackTrace`, the next error's call
// sites hand over the `WebAssembly.Instance` (`getThis()` of a wasm frame) and with it the function
// table: a guest rewrote `abs` into `len` for every later run of its sidecar. The process seal held;
// cross-run isolation did not (the next run stayed clean only because another check retired it).
// Closed here at each step: the bridge is a pair of devices (bytes in, bytes out, errors are OSError
// with an errno), so no JS object stands behind it; `Error.prepareStackTrace` cannot be set in the
// sidecar's realm, whatever JsProxy a guest still finds; and the checkpoint proves every entry of
// the function table (test/engines/pyodide/sidecar/wasm-table.test.ts tampers with one directly).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import { PY_FIND_JS, PY_JS_FUNCTION } from "../helpers/pyodide.ts";
import { warmPyodide } from "../helpers/pyodide-state.ts";

// Everything reachable from the bridge's Python side (net.py's and loop.py's functions and classes,
// pyodide.http): their closures, defaults and attributes, and their globals: pyodide.http's, and
// __main__'s (where the bridge is defined) through the bridge's own names. Other modules are not
// entered (the sessions' namespace, the harness and the standard library are not the bridge).
const BRIDGE_WALK = String.raw`${PY_FIND_JS}
import sys, http.client
main = sys.modules["__main__"].__dict__
roots = [main[n] for n in sorted(main) if n.startswith(("_wasmcell", "_Wasmcell"))]
roots += [http.client.HTTPConnection, sys.modules["pyodide.http"]]
js, seen = find_js(roots, enter=[sys.modules["pyodide.http"]], main_prefix=("_wasmcell", "_Wasmcell"))
# The control: the same walk finds an object of a JS-named type held where the bridge's would be (a
# closure of a function in a class's dictionary).
def _control():
    held = type("JsControl", (), {})()
    class Bridge:
        def call(self):
            return held
    return Bridge
control = find_js([_control()])[0]
[js, seen > 50, control]`;

// The attack as it was found, step by step; each step records how far it got.
const ATTACK = String.raw`
import sys
steps = {}
def meth(f):
    import ctypes  # only once the table is in hand: ctypes loads a library, which retires the sidecar
    ml = ctypes.c_uint32.from_address(id(f) + 8).value
    return ctypes.c_uint32.from_address(ml + 4).value
main = sys.modules["__main__"].__dict__
fns = []
for v in list(main.values()):
    for o in (v if isinstance(v, list) else [v]):
        if type(o).__name__.startswith("Js"):
            fns.append(o)
steps["bridge JS functions"] = len(fns)
err = None
for fn in fns:
    try:
        fn.new()
    except Exception as e:
        err = getattr(e, "js_error", None)
steps["JS error"] = err is not None
if err is not None:
    Error = getattr(err.constructor, "__proto__")
    steps["Function"] = repr(err.constructor.constructor)
    got = []
    def hook(e, frames):
        for i in range(frames.length):
            th = frames[i].getThis()
            if th is not None and "Instance" in str(th):
                got.append(th)
                break
        return "hooked"
    Error.prepareStackTrace = hook
    try:
        fns[0].new()
    except Exception as e:
        steps["stack"] = str(e.js_error.stack)
    if got:
        table = got[0].exports.__indirect_function_table
        table.set(meth(abs), table.get(meth(len)))
        steps["abs('abcd')"] = abs("abcd")
steps`;

// The same hook, from a JsProxy a guest still makes (through ctypes: the one way left).
const HOOK_FROM_LEAK = String.raw`${PY_JS_FUNCTION}
out = {}
try:
    fn.constructor("return 1")
except Exception as e:
    Error = getattr(e.js_error.constructor, "__proto__")
out["Error"] = repr(Error)
called = []
def hook(e, frames):
    called.append(frames.length)
    return "hooked"
for what, act in [("set", lambda: setattr(Error, "prepareStackTrace", hook)),
                  ("delete", lambda: delattr(Error, "prepareStackTrace"))]:
    try:
        act()
        out[what] = "ALLOWED"
    except Exception as e:
        out[what] = type(e).__name__
try:
    fn.constructor("return 2")
except Exception as e:
    out["stack"] = str(e.js_error.stack).split("\n")[0]
out["hook called"] = len(called)
out["prepareStackTrace"] = repr(getattr(Error, "prepareStackTrace", None))
out`;

const PRISTINE_ABS = `
try:
    r = abs("abcd")
except TypeError as e:
    r = str(e)
r`;

describe("pyodide: the host bridge does not lead into the sidecar's JavaScript realm", () => {
  let engine: PyodideEngine;
  let value: (code: string) => Promise<unknown>;
  let run: Awaited<ReturnType<typeof warmPyodide>>["run"];
  before(async () => {
    ({ engine, value, run } = await warmPyodide());
  });
  after(() => engine.close());

  it("nothing reachable from the bridge's Python side is a JavaScript object", async () => {
    const [js, many, control] = (await value(BRIDGE_WALK)) as [string[], boolean, string[]];
    assert.deepEqual([js, many], [[], true]);
    assert.ok(control.length > 0, "the walk finds a JsProxy where there is one");
  });

  it("the attack stops at its first step: there is no JS function to call .new() on", async () => {
    const started = engine.sidecarsStarted;
    const steps = await value(ATTACK);
    assert.deepEqual(steps, { "bridge JS functions": 0, "JS error": false });
    // The next run, in the same sidecar (the attack changed nothing that would retire it): abs is abs.
    assert.equal(await value(PRISTINE_ABS), "bad operand type for abs(): 'str'");
    assert.equal(engine.sidecarsStarted, started);
  });

  it("the bridge answers bad input with a plain OSError carrying only an errno and a string", async () => {
    const v = await value(String.raw`
import os
out = []
for path, data in [("/dev/wasmcell-net", b"\xff not json"), ("/dev/wasmcell-idle", b"not a number")]:
    fd = os.open(path, os.O_RDWR)
    try:
        os.write(fd, data)
        out.append([type(x).__name__ for x in [os.read(fd, 1 << 16)]])
    except Exception as e:
        out.append([type(e).__name__, hasattr(e, "js_error"), type(e).__module__])
    finally:
        os.close(fd)
out`);
    assert.deepEqual(v, [["bytes"], ["OSError", false, "builtins"]]);
  });

  it("requests half-written on many descriptors are refused at the run's memory cap, not held", async () => {
    // The bytes wait in the JS heap, outside the WASM memory cap: bounded by it all the same.
    const started = engine.sidecarsStarted;
    const r = await run(
      String.raw`
import os, errno
fds, chunk = [], b"x" * (4 << 20)
try:
    for _ in range(64):
        fd = os.open("/dev/wasmcell-net", os.O_WRONLY)
        fds.append(fd)
        os.write(fd, chunk)
    out = "held %d MiB" % (4 * len(fds))
except OSError as e:
    out = [errno.errorcode[e.errno], len(fds) * 4 <= 68]
for fd in fds:
    os.close(fd)
out`,
      { memoryMb: 64 },
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, ["ENOMEM", true]);
    assert.equal(await value("1 + 1"), 2);
    assert.equal(engine.sidecarsStarted, started);
  });

  it("a JsProxy a guest still makes cannot install a stack-trace hook", async () => {
    const v = (await value(HOOK_FROM_LEAK)) as Record<string, unknown>;
    assert.equal(v.Error, "function Error() { [native code] }");
    assert.equal(v.set, "JsException");
    assert.equal(v.delete, "JsException");
    assert.equal(v["hook called"], 0);
    assert.match(String(v.stack), /^EvalError: Code generation from strings disallowed/);
    assert.equal(v.prepareStackTrace, "None");
  });
});
