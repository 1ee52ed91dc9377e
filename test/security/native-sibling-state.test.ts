// Threat: a run on the native tier leaves something behind for the next run served by the same warm
// parent (src/engines/native/parent.py): a file, a SysV segment, a descriptor, a signal, a thread, a
// patched module. Each run is a copy-on-write child of a parent that never runs guest code, with its
// own mount, IPC and PID namespaces; when it ends every one of these goes with it. Run N leaves each
// one, run N+1 on the same parent (python.pool 1) must see none of it, and the parent must still be
// the same one (what run N did never reached it). On both parents a stateless run may have: the
// light one (standard-library code) and the stack's (src/engines/native/route.ts).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { createEngine, type NativeEngine } from "../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import type { RunResult } from "../../src/core/types.ts";
import { NATIVE_PARENTS } from "../helpers/native.ts";

const options = resolveOptions({ python: { engine: "native", pool: 1 } });

/**
 * The mount table of each of this engine's warm parents (pid 1 of its own namespace inside the jail
 * whose pid `engine.parentPids` gives), from the host. Other sandboxes on the machine are left out.
 */
function parentMounts(jails: readonly number[]): string[] {
  const procs = new Map<number, { ppid: number; status: string }>();
  for (const name of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      procs.set(Number(name), { ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]), status });
    } catch {
      // gone
    }
  }
  const inJail = (pid: number) => {
    for (let at = pid, i = 0; i < 16 && at > 1; i++, at = procs.get(at)?.ppid ?? 0) if (jails.includes(at)) return true;
    return false;
  };
  const out: string[] = [];
  for (const [pid, { status }] of procs) {
    const ns = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/);
    if (ns?.length !== 3 || ns[2] !== "1" || !inJail(pid)) continue;
    try {
      // Mount ids and the parent's own pid differ per parent: keep where and what is mounted.
      const table = readFileSync(`/proc/${pid}/mountinfo`, "utf8").trim().split("\n");
      out.push(table.map((l) => l.split(" ").slice(3, 5).join(" ")).join("\n"));
    } catch {
      // gone
    }
  }
  return out.sort();
}
let engine: NativeEngine;
const value = (r: RunResult): unknown => {
  assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
  return r.value;
};

for (const { name, light, route } of NATIVE_PARENTS)
  describe(`native warm parent (${name}): what run N leaves is gone for run N+1`, () => {
    const run = (code: string): Promise<RunResult> => {
      const request = resolveRequest(
        { language: "python", engine: "native", code: route(code), limits: { timeoutMs: 20_000 } },
        options,
      );
      assert.equal(engine.routesLight(request), light, "the run goes to the parent under test");
      return engine.run(request);
    };
    let parent: number[];
    before(async () => {
      engine = (await createEngine(options)) as NativeEngine;
      parent = engine.parentPids;
      assert.equal(parent.length, 2, "one slot: its stack parent and a light one");
    });
    after(async () => {
      // Every run above was served by the one parent it started with.
      assert.deepEqual(engine.parentPids, parent);
      await engine.close();
    });

    it("a mount: the scratch tmpfs a child mounts shows in no other mount namespace", async () => {
      const before = parentMounts(engine.parentPids);
      assert.equal(before.length, 2, "a stack parent and a light one");
      value(await run("import os\nos.listdir('/tmp')"));
      assert.deepEqual(parentMounts(engine.parentPids), before);
    });

    it("a file (working directory, /tmp, a hidden name)", async () => {
      value(
        await run(
          "import os\nopen('left.txt','w').write('secret')\nopen('/tmp/left','w').write('secret')\nos.makedirs('/tmp/.hide', exist_ok=True)\nopen('/tmp/.hide/x','w').write('s')\nsorted(os.listdir('/tmp'))",
        ),
      );
      const v = value(
        await run(
          "import os\n[sorted(os.listdir('.')), sorted(os.listdir('/tmp')), os.path.exists('/tmp/left'), os.path.exists('/tmp/.hide')]",
        ),
      );
      assert.deepEqual(v, [[], ["work"], false, false]);
    });

    it("a SysV shared-memory segment (and /dev/shm)", async () => {
      const code = `
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
made = libc.shmget(0x5eed, 4096, IPC_CREAT | 0o666)
made_err = errno.errorcode.get(ctypes.get_errno(), "")
try:
    open('/dev/shm/left', 'w').write('x'); shm = 'written'
except OSError as e:
    shm = type(e).__name__
[made >= 0 or made_err, shm]`;
      const first = value(await run(code));
      assert.ok(Array.isArray(first));
      const v = value(
        await run(`
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
found = libc.shmget(0x5eed, 0, 0)
[found >= 0, os.path.exists('/dev/shm/left')]`),
      );
      assert.deepEqual(v, [false, false]);
    });

    it("a descriptor", async () => {
      const count = `
import os
def open_fds():
    n = []
    for fd in range(0, 1024):
        try:
            os.fstat(fd); n.append(fd)
        except OSError:
            pass
    return n
`;
      const fresh = value(await run(`${count}\nopen_fds()`));
      value(await run(`${count}\nkeep = [open('f%d' % i, 'w') for i in range(20)]\nr, w = os.pipe()\nopen_fds()`));
      assert.deepEqual(value(await run(`${count}\nopen_fds()`)), fresh);
    });

    it("a signal: a pending timer, a handler, a blocked mask, a kill aimed outside", async () => {
      const r = await run(`
import os, signal
signal.signal(signal.SIGUSR1, lambda *a: None)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
signal.setitimer(signal.ITIMER_REAL, 0.4)
signal.signal(signal.SIGALRM, signal.SIG_DFL)
tries = []
for target in (0, -1, 1, 2, os.getppid()):
    try:
        os.kill(target, signal.SIGKILL); tries.append('sent')
    except OSError as e:
        tries.append(type(e).__name__)
[os.getpid(), os.getppid(), tries]`);
      // The child is pid 1 of its own namespace: no parent it can name, and kill() is not allowed.
      assert.deepEqual(value(r), [
        1,
        0,
        ["PermissionError", "PermissionError", "PermissionError", "PermissionError", "PermissionError"],
      ]);
      const v = value(
        await run(`
import signal, time
time.sleep(0.8)
[signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL, sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, set()))]`),
      );
      // Alive after 0.8 s: run N's 0.4 s timer (with SIGALRM's default action, death) did not carry over.
      assert.deepEqual(v, [true, []]);
    });

    it("a random sequence: each child draws its own (random, numpy, os.urandom)", async () => {
      // Every child starts from the parent's memory, generators included: without a fresh seed per
      // child, run N+1 would draw exactly what run N drew, and could predict a sibling's numbers.
      const code = light
        ? "import random, os\n[str(random.getrandbits(62)), str(random.random()), os.urandom(8).hex()]"
        : "import random, os, numpy as np\n" +
          "[str(random.getrandbits(62)), str(np.random.randint(0, 2**62)), str(np.random.default_rng().integers(0, 2**62)), os.urandom(8).hex()]";
      const draws: unknown[][] = [];
      for (let i = 0; i < 3; i++) draws.push(value(await run(code)) as unknown[]);
      for (let k = 0; k < draws[0]!.length; k++)
        assert.equal(new Set(draws.map((d) => d[k])).size, 3, JSON.stringify(draws));
    });

    it("a thread that outlives its run", async () => {
      value(
        await run(`
import threading, time, sys
def late():
    time.sleep(0.3)
    print('LEAK from run N', flush=True)
    open('late.txt', 'w').write('x')
threading.Thread(target=late).start()
'started'`),
      );
      const r = await run("import time, threading, os\ntime.sleep(0.8)\n[threading.active_count(), os.listdir('.')]");
      assert.deepEqual(value(r), [1, []]);
      assert.equal(r.stdout, "");
    });

    it("a patched module: builtins, json, sys.modules (and pandas, on the stack's parent)", async () => {
      // Run N breaks even its own driver (it uses len): whatever it returns, nothing of it may carry over.
      if (light) {
        await run(`
import builtins, json, sys
builtins.len = lambda x: 42
json.dumps = lambda *a, **k: '"forged"'
sys.modules['evil'] = object()
'patched'`);
        assert.deepEqual(value(await run("import json, sys\n[len([1]), json.dumps(1), 'evil' in sys.modules]")), [
          1,
          "1",
          false,
        ]);
        return;
      }
      await run(`
import builtins, json, sys, pandas
builtins.len = lambda x: 42
json.dumps = lambda *a, **k: '"forged"'
pandas.DataFrame.__len__ = lambda self: 42
sys.modules['evil'] = object()
'patched'`);
      const v = value(
        await run(
          "import json, sys, pandas\n[len([1]), json.dumps(1), len(pandas.DataFrame({'a': [1]})), 'evil' in sys.modules]",
        ),
      );
      assert.deepEqual(v, [1, "1", 1, false]);
    });
  });
