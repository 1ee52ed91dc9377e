// Threat: the Python harness (src/engines/lib/python/harness.py, the Pyodide sidecar's setup.py, the
// native driver.py) runs in the guest's own interpreter, after the guest's code, and looks names up
// that the guest can rebind: builtins (`len`, `str`, `isinstance`, the exception classes,
// `__import__`…) and module attributes (`sys.stdout`, `json.dumps`, `traceback.*`, `os.*`…). A guest
// that rebinds one must get a well-formed result for its own run (ok, or its own error: never
// `crashed` "the harness failed", never a protocol violation) and the sidecar, or the session, must
// serve the next run; a stateless next run sees pristine builtins and modules (checked against a
// fingerprint taken before any attack). What stays open: a guest that rewrites the harness module
// itself only breaks its own result (and, in a session, its own later runs).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RunResult } from "../../src/core/types.ts";
import { closeNative, runNative } from "../helpers/native.ts";
import { closePyodide, pyodideSandbox, runPy } from "../helpers/pyodide.ts";

// Every name the harness, setup.py and driver.py use after the guest's code has run (builtins, module
// attributes, the classes behind json.dumps and the traceback module), and a few they must not need.
const BUILTINS = [
  "len",
  "str",
  "repr",
  "isinstance",
  "type",
  "open",
  "print",
  "sorted",
  "dict",
  "list",
  "tuple",
  "int",
  "float",
  "bool",
  "max",
  "min",
  "next",
  "enumerate",
  "range",
  "compile",
  "eval",
  "exec",
  "getattr",
  "hasattr",
  "iter",
  "id",
  "hash",
  "object",
  "__import__",
  "__build_class__",
  "BaseException",
  "Exception",
  "SystemExit",
  "KeyboardInterrupt",
  "SyntaxError",
  "ValueError",
  "MemoryError",
  "RecursionError",
  "TypeError",
  "OSError",
  "AttributeError",
  "StopIteration",
].map((n) => `builtins.${n}`);
const MODULE_ATTRIBUTES = [
  "sys.stdout",
  "sys.stderr",
  "sys.__stdout__",
  "sys.__stderr__",
  "sys.__excepthook__",
  "sys.excepthook",
  "json.dumps",
  "json.loads",
  "json.JSONEncoder",
  "json.encoder.c_make_encoder",
  "json.encoder.encode_basestring",
  "json.encoder.JSONEncoder.iterencode",
  "json.encoder.JSONEncoder.encode",
  "traceback.extract_tb",
  "traceback.format_list",
  "traceback.format_exception_only",
  "traceback.StackSummary",
  "traceback.TracebackException",
  "linecache.cache",
  "linecache.getline",
  "linecache.checkcache",
  "io.StringIO",
  "types.ModuleType",
  "ast.parse",
  "ast.Expression",
  "ast.Expr",
  "ast.PyCF_ALLOW_TOP_LEVEL_AWAIT",
  "os.walk",
  "os.scandir",
  "os.lstat",
  "os.stat",
  "os.path.join",
  "os.path.abspath",
  "os.fspath",
  "os.write",
  "os._exit",
  "os.getcwd",
  "os.chdir",
  "base64.b64encode",
  "base64.b64decode",
  "base64.binascii",
  "binascii.b2a_base64",
  "signal.setitimer",
  "signal.signal",
  "time.time",
  "stat.S_ISREG",
  "random.seed",
  "asyncio.run",
  "asyncio.current_task",
  "asyncio.all_tasks",
  "asyncio.get_event_loop",
  "asyncio.new_event_loop",
  "asyncio.events.get_running_loop",
];
const TARGETS = [...BUILTINS, ...MODULE_ATTRIBUTES];

const IMPORTS = `import builtins, sys, json, json.encoder, traceback, linecache, io, types, ast, os, os.path, base64, binascii, signal, time, stat, random, asyncio
`;
// Hostile stand-ins: one raises on every use, one answers junk (the reported bug: `lambda x: 'no'`).
const PRELUDE = `${IMPORTS}_VE, _obj, _sleep = ValueError, object, asyncio.sleep
class _Evil:
    def __getattr__(self, name):
        raise TypeError("hostile attribute " + name)
    def __call__(self, *a, **k):
        raise TypeError("hostile call")
    def __iter__(self):
        raise TypeError("hostile iter")
    def __bool__(self):
        raise TypeError("hostile bool")
_junk = lambda *a, **k: "no"
`;
const VARIANTS = { raises: "_Evil()", junk: "_junk" } as const;

// How each run ends, and what its result must then be.
const ENDINGS: { name: string; code: string; check: (r: RunResult) => void }[] = [
  { name: "normally", code: "_x = 1", check: (r) => assert.ok(r.ok && r.value === undefined, JSON.stringify(r)) },
  {
    name: "with a data value",
    code: "[1, 'a', {'k': 2.5}, None]",
    check: (r) => assert.deepEqual(r.ok && r.value, [1, "a", { k: 2.5 }, null], JSON.stringify(r)),
  },
  {
    name: "with a value that comes back as its repr",
    code: "_obj()",
    check: (r) => assert.match(String(r.ok && r.value), /^<object object at 0x[0-9a-f]+>$/, JSON.stringify(r)),
  },
  {
    name: "with top-level await and a value",
    code: "await _sleep(0)\n[1, 'a', {'k': 2.5}, None]",
    // asyncio is Python code that uses builtins: a run that broke one may break its own event loop, and
    // then gets that error or, when the loop spins (`isinstance` answering "no"), its deadline: never
    // the harness's failure.
    check: (r) => {
      if (r.ok) assert.deepEqual(r.value, [1, "a", { k: 2.5 }, null], JSON.stringify(r));
      else assert.ok(["runtime", "timeout"].includes(r.error.kind), JSON.stringify(r));
    },
  },
  {
    name: "with an exception",
    code: "raise _VE('mine')",
    check: (r) => {
      assert.ok(!r.ok, JSON.stringify(r));
      assert.equal(r.error.kind, "runtime", JSON.stringify(r));
      assert.equal(r.error.name, "ValueError", JSON.stringify(r));
      assert.match(r.error.message, /mine/, JSON.stringify(r));
    },
  },
];

const attack = (target: string, replacement: string, ending: string) =>
  `${PRELUDE}${target} = ${replacement}\n${ending}`;

// What a stateless run sees of every target: its type and name. Taken before any attack.
const FINGERPRINT = `${IMPORTS}
def _fp(n):
    try:
        o = eval(n)
    except AttributeError:
        return "missing"  # not on this engine (Pyodide has no signal.setitimer)
    t = type(o)
    return t.__module__ + "." + t.__qualname__ + ":" + str(getattr(o, "__qualname__", getattr(o, "__name__", "")))
{n: _fp(n) for n in ${JSON.stringify(TARGETS)}}`;

/** A result that is the guest's own doing, never the harness's failure or the host's protocol verdict. */
function wellFormed(r: RunResult): void {
  if (r.ok) return;
  assert.notEqual(r.error.kind, "crashed", JSON.stringify(r.error));
  assert.doesNotMatch(r.error.message, /harness failed|protocol violation|killed by/, JSON.stringify(r.error));
}

describe("pyodide: the harness does not trust names a stateless run rebinds", () => {
  after(closePyodide);
  let pristine: unknown;
  before(async () => {
    const r = await runPy(FINGERPRINT);
    assert.ok(r.ok, JSON.stringify(r));
    pristine = r.value;
  });

  it("the reported case: builtins.len = lambda x: 'no', then the next run", async () => {
    const r = await runPy("import builtins\nbuiltins.len = lambda x: 'no'");
    assert.ok(r.ok, JSON.stringify(r));
    const next = await runPy("len([1, 2])");
    assert.equal(next.ok && next.value, 2, JSON.stringify(next));
  });

  for (const target of TARGETS) {
    it(`rebinding ${target}: each ending's result is right, and the next run is pristine`, async () => {
      for (const [variant, replacement] of Object.entries(VARIANTS)) {
        for (const ending of ENDINGS) {
          const r = await runPy(attack(target, replacement, ending.code));
          wellFormed(r);
          ending.check(r);
          const next = await runPy(FINGERPRINT);
          assert.deepEqual(next.ok && next.value, pristine, `after ${variant} ${ending.name}: ${JSON.stringify(next)}`);
        }
      }
    });
  }
});

describe("pyodide: the harness does not trust names a session rebinds", () => {
  after(closePyodide);

  for (const target of TARGETS) {
    it(`a session rebinding ${target} gets its own result and keeps being served`, async () => {
      const sb = await pyodideSandbox();
      for (const replacement of Object.values(VARIANTS)) {
        await using s = await sb.session({ language: "python" });
        const r = await s.run({ code: attack(target, replacement, "raise _VE('mine')") });
        wellFormed(r);
        ENDINGS.at(-1)!.check(r);
        // The rebinding is the session's own state now; the harness still serves it, async code too
        // (whose event loop is Python code the rebinding may have broken: then that is its error).
        const next = await s.run({ code: "await _sleep(0)\n_VE" });
        wellFormed(next);
        if (next.ok) assert.match(String(next.value), /ValueError/, JSON.stringify(next));
        else assert.ok(["runtime", "timeout"].includes(next.error.kind), JSON.stringify(next));
        const value = await s.run({ code: "[1, 'a', {'k': 2.5}, None]" });
        assert.deepEqual(value.ok && value.value, [1, "a", { k: 2.5 }, null], JSON.stringify(value));
      }
    });
  }
});

describe("native: the harness and the driver do not trust names a run rebinds", () => {
  after(closeNative);

  for (const target of TARGETS) {
    it(`rebinding ${target}: each ending's result is right, and the next run is served`, async () => {
      for (const replacement of Object.values(VARIANTS)) {
        for (const ending of ENDINGS) {
          const r = await runNative(attack(target, replacement, ending.code));
          wellFormed(r);
          ending.check(r);
        }
      }
      const next = await runNative("len([1, 2])");
      assert.equal(next.ok && next.value, 2, JSON.stringify(next));
    });
  }
});
