// Threat: any piece of mutable state a stateless run can reach survives into the next run. This is
// the inventory: every such piece, where it lives, how the sidecar resets it, and a hostile run that
// changes it, after which the next run (same sidecar, pool 1) must see exactly the pristine state
// (STATE_PROBE: the whole file system with metadata, the next inode/fd/pipe, env, cwd, modules…).
// The sidecar's side of the same table is in src/engines/pyodide/sidecar/checkpoint.ts.
//
// | state                              | lives in               | reset                         | verdict after a hostile run |
// |------------------------------------|------------------------|-------------------------------|-----------------------------|
// | globals, builtins, sys.modules,    | WASM linear memory     | memory copied back            | pristine, same sidecar      |
// |  recursion limit, os.environ, cwd  |                        |                               |                             |
// | FS nodes, metadata, /dev, /proc,   | JS heap (FSNode)       | rebuilt from the record       | pristine, same sidecar      |
// |  /dev/shm, inode + pipe counters   |                        |                               |                             |
// | open streams, dup'd fds            | FS.streams             | closed, table rebuilt         | pristine, same sidecar      |
// | terminal buffers                   | TTY.ttys               | rebuilt from the record       | pristine, same sidecar      |
// | tasks a run leaves on the event    | WASM memory (loop.py:  | memory copied back            | pristine, same sidecar      |
// |  loop (sync or top-level await)    |  no JavaScript timer)  |  (cross-run-pyodide-async)    |                             |
// | JS references (a JsProxy, made     | hiwire table           | cannot be proven: compared    | sidecar retired             |
// |  through ctypes)                   |                        |                               |                             |
// | dynamic code (ctypes callbacks)    | WASM function table    | cannot be undone: compared    | sidecar retired             |
// | JS built-ins (through a JsProxy)   | the realm              | cannot be undone: fingerprint | sidecar retired             |
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import { PY_JS_FUNCTION } from "../helpers/pyodide.ts";
import { STATE_PROBE, warmPyodide } from "../helpers/pyodide-state.ts";

// [state, hostile run, "reset" (same sidecar) or "retire"]
const INVENTORY: [string, string, "reset" | "retire"][] = [
  ["Python globals and builtins", "import builtins\nbuiltins.LEAK = 1\nLEAK2 = 2", "reset"],
  [
    "sys.modules and the import system",
    "import sys, types, fractions\nsys.modules['leak'] = types.ModuleType('leak')\nsys.path.insert(0, '/tmp')",
    "reset",
  ],
  [
    "the recursion limit and sys flags",
    "import sys\nsys.setrecursionlimit(50)\nsys.dont_write_bytecode = True",
    "reset",
  ],
  ["os.environ and putenv", "import os\nos.environ['LEAK'] = '1'\nos.putenv('LEAK2', '2')", "reset"],
  ["the working directory", "import os\nos.chdir('/dev/shm')", "reset"],
  [
    "files anywhere, /dev and /proc included",
    "import os\nos.remove('/dev/null')\nopen('/dev/null', 'w').write('x')\nos.mkdir('/proc/x')\nopen('/lib/leak.py', 'w').write('x')",
    "reset",
  ],
  ["file metadata", "import os\nos.chmod('/dev/urandom', 0)\nos.utime('/lib/python314.zip', (1, 1))", "reset"],
  [
    "the inode and pipe counters",
    "import os\nfor _ in range(50):\n    os.pipe()\n    open('/tmp/x', 'w').close()\n    os.remove('/tmp/x')",
    "reset",
  ],
  ["open files and descriptors", "import os\nkeep = open('/tmp/held', 'w')\nos.dup2(1, 9)", "reset"],
  ["terminal buffers", "open('/dev/tty', 'w').write('partial')", "reset"],
  [
    "a background task left by a synchronous run (on the sandbox's loop: no JavaScript timer)",
    "import asyncio\nasync def later():\n    await asyncio.sleep(0.01)\n    open('/tmp/late', 'w')\nasyncio.get_event_loop().create_task(later())",
    "reset",
  ],
  ["a JS reference held by Python (a JsProxy made through ctypes)", `${PY_JS_FUNCTION}keep = fn.constructor`, "retire"],
  [
    "the WASM function table (a ctypes callback)",
    "import ctypes\ncb = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 1)",
    "retire",
  ],
  ["a JS built-in (through a JsProxy)", `${PY_JS_FUNCTION}fn.constructor.prototype.leak = 1`, "retire"],
];

describe("pyodide: the state inventory, each piece back to the checkpoint after a hostile run", () => {
  let engine: PyodideEngine;
  let value: (code: string) => Promise<unknown>;
  let pristine: unknown;
  before(async () => {
    ({ engine, value } = await warmPyodide());
    pristine = await value(STATE_PROBE);
  });
  after(() => engine.close());

  for (const [state, code, verdict] of INVENTORY) {
    it(`${state}: ${verdict === "reset" ? "rebuilt in place" : "the sidecar retires"}`, async () => {
      const started = engine.sidecarsStarted;
      await value(`${code}\n'hostile'`);
      assert.deepEqual(await value(STATE_PROBE), pristine);
      assert.equal(engine.sidecarsStarted, verdict === "reset" ? started : started + 1);
    });
  }
});
