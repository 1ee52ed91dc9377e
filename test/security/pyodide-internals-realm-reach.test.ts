// Threat: guest Python reaches a JavaScript object of the sidecar's realm through what Pyodide's own
// Python side still holds once `js`, `pyodide_js`, `pyodide` and `_pyodide_core` are blocked from
// import: the event loop's module globals (`scheduleCallback`, a JsProxy; `create_once_callable`,
// which makes one from any callable), reached through the running loop, its class among
// `object.__subclasses__()`, `time.sleep` or `asyncio.run` (Pyodide's replacements); the meta path's
// JsFinder (it keeps the `js` and `pyodide_js` modules); `_pyodide_core` left in `__main__`;
// `shutil`'s wheel archiver (Pyodide's, whose globals hold `to_js`); and `_pyodide_core` itself made
// again from CPython's extension cache by `_imp.create_builtin` / `_imp.create_dynamic`, which no
// `sys.modules` entry or import hook sees. Any JsProxy's `.constructor` is the realm's `Function`.
// Each route below is the whole attack, ending at that `Function`; then a walk of everything a guest
// can reach by attributes from the interpreter's roots finds no JavaScript object and no function
// that makes one. (ctypes is another route, through the interpreter's exported C functions: see
// docs/seal.md; the layers below the guest layer assume it is taken.)
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { warmPyodide } from "../helpers/pyodide-state.ts";

// A JsProxy is an instance of Pyodide's C type JsProxy (a static type; pyodide.ffi's documentation
// classes of the same name are Python classes, whose instances hold no JavaScript object).
const JS_PROXY = "HEAPTYPE = 1 << 9";

// Python prelude: classes(), every class there is (object and its subclasses, transitively).
const CLASSES = String.raw`
def classes():
    out, todo, seen = [], [object], set()
    while todo:
        c = todo.pop()
        if id(c) not in seen:
            seen.add(id(c))
            out.append(c)
            try:
                todo.extend(type.__subclasses__(c))
            except TypeError:
                pass
    return out
`;

// [route, Python that ends with `proxy` bound to what it reached]
const ROUTES: [string, string][] = [
  [
    "the running loop's scheduleCallback",
    `import asyncio
proxy = type(asyncio.get_event_loop()).call_later.__globals__["scheduleCallback"]`,
  ],
  [
    "the running loop's create_once_callable",
    `import asyncio
proxy = type(asyncio.get_event_loop()).call_later.__globals__["create_once_callable"](lambda: 1)`,
  ],
  [
    "Pyodide's WebLoop class, found among object.__subclasses__()",
    `def classes(c=object, seen=set()):
    for s in type.__subclasses__(c):
        if id(s) not in seen:
            seen.add(id(s))
            yield s
            yield from classes(s)
loop = next(c for c in classes() if c.__name__ == "WebLoop")
proxy = loop.call_later.__globals__["scheduleCallback"]`,
  ],
  [
    "time.sleep's globals",
    `import time
proxy = time.sleep.__globals__["create_once_callable"](lambda: 1)`,
  ],
  [
    "asyncio.run's globals",
    `import asyncio
g = asyncio.run.__globals__
proxy = g["_pyodide_asyncio_run"].__globals__["scheduleCallback"]`,
  ],
  [
    "the event loop policy's loop",
    `import asyncio, warnings
warnings.simplefilter("ignore")
loop = asyncio.get_event_loop_policy().get_event_loop()
proxy = type(loop).call_later.__globals__["scheduleCallback"]`,
  ],
  [
    "the meta path's JsFinder (pyodide_js)",
    `import sys
finder = next(f for f in sys.meta_path if hasattr(f, "jsproxies"))
proxy = finder.jsproxies["pyodide_js"]`,
  ],
  [
    "_pyodide_core left in __main__",
    `import sys
proxy = sys.modules["__main__"].__dict__["_pyodide_core"].to_js({})`,
  ],
  [
    "_pyodide_core made again by _imp.create_builtin",
    `import _imp, importlib.machinery
core = _imp.create_builtin(importlib.machinery.ModuleSpec("_pyodide_core", importlib.machinery.BuiltinImporter))
proxy = core.to_js({})`,
  ],
  [
    "_pyodide_core made again by _imp.create_dynamic",
    `import _imp, types
core = _imp.create_dynamic(types.SimpleNamespace(name="_pyodide_core", origin="_pyodide_core"))
proxy = core.to_js({})`,
  ],
  [
    "JsException, called with a name and a message (its class is among Exception's subclasses)",
    `def classes(c=Exception):
    for s in type.__subclasses__(c):
        yield s
        yield from classes(s)
proxy = None
for c in classes():
    if c.__name__ == "JsException":
        try:
            made = c("TypeError", "x")
            made.constructor
            proxy = made
        except Exception:
            pass`,
  ],
  [
    "shutil's wheel archiver (Pyodide's) and its globals",
    `import shutil
proxy = shutil._ARCHIVE_FORMATS["whl"][0].__globals__["to_js"]({})`,
  ],
];

// The route, then the realm's Function from what it reached; or the name of what stopped it.
const ATTACK = (code: string) =>
  `try:\n${indent(`${code}\nout = str(proxy.constructor.constructor)`)}\nexcept Exception as e:\n    out = type(e).__name__\nout`;

// Everything reachable by attribute from the interpreter's roots: every module (and every module's
// globals, whatever holds them), every class (object.__subclasses__(), so the classes of modules no
// longer in sys.modules too), builtins, sys's hooks, the event loop and its policy, the import
// system. Breadth first; every object kept alive so no id is reused. A "bridge" object is a JsProxy
// (its type is pyodide.ffi's), a function of _pyodide_core (each makes or takes one), that module,
// or CPython's own _imp.create_builtin/_imp.create_dynamic (which make _pyodide_core again).
const WALK = String.raw`${JS_PROXY}${CLASSES}import sys, types, builtins, asyncio, collections, warnings
warnings.simplefilter("ignore")
ORIGINAL = {"create_builtin", "create_dynamic"}
def bridge(o):
    if any(b.__name__ == "JsProxy" and not b.__flags__ & HEAPTYPE for b in type(o).__mro__):
        return "JsProxy"
    if isinstance(o, types.ModuleType) and o.__name__ == "_pyodide_core":
        return "module _pyodide_core"
    if isinstance(o, types.BuiltinFunctionType):
        owner = getattr(o.__self__, "__name__", None)
        if owner == "_pyodide_core" or owner == "_imp" and o.__name__ in ORIGINAL:
            return "%s.%s" % (owner, o.__name__)
    return None
roots = [("sys.modules", dict(sys.modules)), ("classes", classes()), ("builtins", builtins), ("sys", sys),
         ("loop", asyncio.get_event_loop()), ("policy", asyncio.get_event_loop_policy()),
         ("meta_path", list(sys.meta_path)), ("path_hooks", list(sys.path_hooks)),
         ("path_importer_cache", dict(sys.path_importer_cache)), ("asyncgen hooks", sys.get_asyncgen_hooks())]
ATTRS = ("__dict__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "cell_contents",
         "__func__", "__self__", "__wrapped__", "__mro__", "__objclass__", "__module__")
seen, keep, found = set(), [], {}
todo = collections.deque(roots[i][::-1] for i in range(len(roots)))
while todo:
    o, path = todo.popleft()
    if id(o) in seen:
        continue
    seen.add(id(o))
    keep.append(o)
    what = bridge(o)
    if what:
        found.setdefault(what, path)
        continue
    if isinstance(o, (dict, types.MappingProxyType)):
        todo.extend((v, "%s[%.40r]" % (path, k)) for k, v in list(o.items()))
    elif isinstance(o, (list, tuple, set, frozenset)):
        todo.extend((v, "%s[%d]" % (path, i)) for i, v in enumerate(o))
    for name in ATTRS:
        try:
            a = getattr(o, name)
        except Exception:
            continue
        if a is not None:
            todo.append((a, path + "." + name))
[len(seen), found]`;

// Every class of Pyodide's (reachable whatever the blocks: object.__subclasses__()), called, and each
// of its class and static methods, with a few shapes of argument: none hands back a JsProxy.
const CLASS_CALLS = String.raw`${JS_PROXY}${CLASSES}def js(o):
    return any(b.__name__ == "JsProxy" and not b.__flags__ & HEAPTYPE for b in type(o).__mro__)
made, calls = {}, 0
for c in classes():
    if not str(getattr(c, "__module__", "")).startswith(("pyodide", "_pyodide")):
        continue
    targets = [(c.__qualname__, c)] + [("%s.%s" % (c.__qualname__, k), getattr(c, k)) for k, v in list(vars(c).items())
                                       if isinstance(v, (classmethod, staticmethod))]
    for name, f in targets:
        for args in [(), (1,), ("x",), ("TypeError", "x"), (lambda: 1,), ({},)]:
            calls += 1
            try:
                r = f(*args)
            except BaseException:
                continue
            if js(r):
                made[name] = repr(type(r))
[calls, made]`;

describe("pyodide: Pyodide's own Python side leads to no JavaScript object", () => {
  let warm: Awaited<ReturnType<typeof warmPyodide>>;
  const value = (code: string) => warm.value(code);
  before(async () => {
    warm = await warmPyodide();
  });
  after(() => warm.engine.close());

  for (const [route, code] of ROUTES) {
    it(`${route}: no JsProxy at the end of it`, async () => {
      const r = await value(ATTACK(code));
      assert.notEqual(r, "function Function() { [native code] }", `${route} reached the realm's Function`);
      assert.equal(typeof r, "string");
      assert.match(String(r), /^(KeyError|AttributeError|StopIteration|RuntimeError|ModuleNotFoundError|ImportError)$/);
    });
  }

  it("what a guest uses still works: the event loop, time.sleep, built-in and library imports", async () => {
    const v = await value(String.raw`
import asyncio, sys, time, warnings
warnings.simplefilter("ignore")
out = {"loop": type(asyncio.get_event_loop()).__name__,
       "policy's loop": asyncio.get_event_loop_policy().get_event_loop() is asyncio.get_event_loop()}
t = time.monotonic(); time.sleep(0.02); out["slept"] = time.monotonic() - t >= 0.02
import array, cmath
del sys.modules["math"]
import math
out["math again"] = math.sqrt(4.0)
import markupsafe
out["markupsafe"] = str(markupsafe.escape("<"))
try:
    import _testcapi
    out["_testcapi"] = "ALLOWED"
except ImportError as e:
    out["_testcapi"] = str(e)
try:
    asyncio.run(asyncio.sleep(0))
except RuntimeError as e:
    out["asyncio.run"] = str(e).split(";")[0]
out`);
    assert.deepEqual(v, {
      loop: "_WasmcellLoop",
      "policy's loop": true,
      slept: true,
      "math again": 2,
      markupsafe: "&lt;",
      _testcapi: "No module named '_testcapi' (not available in the sandbox)",
      "asyncio.run": "asyncio.run() cannot block inside the sandbox's running event loop",
    });
    assert.equal(await value("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'"), "awaited");
  });

  it("no class of Pyodide's, called, makes a JavaScript object", async () => {
    const [calls, made] = (await value(CLASS_CALLS)) as [number, Record<string, string>];
    assert.ok(calls > 100, `only ${calls} calls`);
    assert.deepEqual(made, {});
  });

  it(
    "nothing reachable from the interpreter's roots is a JavaScript object or makes one",
    { timeout: 120_000 },
    async () => {
      // A walk of ~97,000 objects: seconds of interpreted Python on a loaded machine.
      const r = await warm.run(WALK, { timeoutMs: 90_000 });
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      const [seen, found] = (r.ok ? r.value : []) as [number, Record<string, string>];
      assert.ok(seen > 50_000, `the walk saw only ${seen} objects`);
      assert.deepEqual(found, {});
    },
  );
});

function indent(code: string): string {
  return code
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
