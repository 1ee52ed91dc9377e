// What a guest can see of the interpreter's state, from inside a run: the file system (every node,
// /dev and /proc included, with all metadata), the next inode and file descriptor a run would get,
// the environment and the interpreter's own state. Two fresh runs see the same probe result; a run
// that sees a different one is seeing what an earlier run left behind.
import assert from "node:assert/strict";
import { createEngine, type PyodideEngine } from "../../src/engines/pyodide/index.ts";
import { resolveOptions, resolveRequest, type ResolvedOptions } from "../../src/options/index.ts";
import type { Limits, RunResult } from "../../src/core/types.ts";
import { FULL } from "./pyodide.ts";

export const STATE_PROBE = String.raw`
import os, stat, sys, builtins, gc
def _node(p):
    try:
        st = os.lstat(p)
    except OSError as e:
        return [p, "error", e.errno]
    link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
    return [p, st.st_mode, st.st_ino, st.st_dev, st.st_rdev, st.st_nlink, st.st_size,
            round(st.st_atime * 1000), round(st.st_mtime * 1000), round(st.st_ctime * 1000), link]
# Not walked below: the descriptor table (listed on its own at the end), and the read-only host mounts
# (the package library and the time-zone database), whose thousands of files cannot change: every
# write there fails with EROFS (test/security/package-library-tamper.test.ts proves it).
_SKIP = {"/proc/self/fd", "/lib/wasmcell-packages", "/usr/share/zoneinfo"}
def _walk(top):
    out = [_node(top)]
    if out[0][1] != "error" and stat.S_ISDIR(out[0][1]) and top not in _SKIP:
        for name in sorted(os.listdir(top)):
            out.extend(_walk(os.path.join(top, name)))
    return out
_tree = _walk("/")
with open("/tmp/.probe", "wb") as _f:
    _f.write(b"x")
    _next = [os.fstat(_f.fileno()).st_ino, _f.fileno()]
os.remove("/tmp/.probe")
_r, _w = os.pipe()
_pipe = [_r, _w, os.fstat(_r).st_ino]
os.close(_r); os.close(_w)
with open("/dev/null", "rb") as _f:
    _null = _f.read()
[_tree, _next, _pipe, _null.hex(), sorted(os.environ.items()), sys.getrecursionlimit(), os.getcwd(),
 sorted(k for k in sys.modules), len(dir(builtins)), os.listdir("/proc/self/fd")]
`;

/** One warm sidecar (pool 1), so every run is served by the same interpreter after a reset. */
export async function warmPyodide(
  limits: Partial<Limits> = {},
): Promise<{
  engine: PyodideEngine;
  run: (code: string, more?: Partial<Limits>) => Promise<RunResult>;
  value: (code: string) => Promise<unknown>;
}> {
  const options: ResolvedOptions = resolveOptions({ python: { pool: 1 }, seal: FULL });
  const engine = (await createEngine(options)) as PyodideEngine;
  const run = (code: string, more: Partial<Limits> = {}) =>
    engine.run(
      resolveRequest({ language: "python", code, limits: { timeoutMs: 10_000, ...limits, ...more } }, options),
    );
  const value = async (code: string) => {
    const r = await run(code);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    return r.ok ? r.value : undefined;
  };
  return { engine, run, value };
}

/**
 * Hostile stateless runs of every kind a reset must undo or a sidecar must survive (files in /dev and
 * /tmp, modes, symlinks, pipes, the environment, open files, interrupts, runaway recursion, a
 * deadline, a memory cap), each with its limits and its exact outcome: "ok", or the error kind and
 * name. The cross-run soak and the pool-denial property test both run them.
 */
export const PY_HOSTILE: [string, Partial<Limits>, string][] = [
  ["import os\nos.remove('/dev/null')\nopen('/dev/null', 'w').write('secret')", {}, "ok"],
  ["open('/dev/shm/park', 'wb').write(b'x' * (4 << 20))", {}, "ok"],
  ["import os\nfor p in ('/dev/urandom', '/tmp', '/dev'):\n    os.chmod(p, 0)", {}, "ok"],
  ["import os\nos.utime('/lib/python314.zip', (1, 1))\nos.symlink('/dev', '/tmp/l')", {}, "ok"],
  ["import os\nfor _ in range(30):\n    r, w = os.pipe()\n    os.write(w, b'leak')", {}, "ok"],
  [
    "import os, builtins, sys\nbuiltins.LEAK = 1\nos.environ['LEAK'] = '1'\nsys.setrecursionlimit(60)\nos.chdir('/dev')",
    {},
    "ok",
  ],
  ["keep = [open(f'/tmp/h{i}', 'w') for i in range(10)]\nopen('/dev/tty', 'w').write('partial')", {}, "ok"],
  ["raise KeyboardInterrupt", {}, "runtime KeyboardInterrupt"],
  ["raise MemoryError", {}, "runtime MemoryError"],
  ["raise ValueError('x' * (1 << 20))", {}, "runtime ValueError"],
  ["def f(): f()\nf()", {}, "runtime RecursionError"],
  ["while True:\n    pass", { timeoutMs: 100 }, "timeout KeyboardInterrupt"],
  ["x = []\nwhile True:\n    x.append(bytearray(1 << 20))", { memoryMb: 64 }, "memory MemoryError"],
  [
    "open('out.txt', 'w').write('fine')\nimport os\nos.makedirs('d/e', exist_ok=True)\nopen('d/e/f', 'w').write('x')",
    {},
    "ok",
  ],
];
