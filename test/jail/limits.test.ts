// Resource limits of the jail: rlimits, the memory cap (and which mechanism is in force), pids, and
// the wall-clock kill of the whole jail.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { cgroupSupport, isRoot } from "../../src/jail/host.ts";
import { spawnJailed } from "../../src/jail/index.ts";
import { collect, pythonSpec, runPython } from "./helpers.ts";

describe("rlimits", () => {
  it("sets CPU, file size, open files, core and address space, soft = hard", async () => {
    const code = `
import resource as r
for name in ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_AS"):
    print(name, *r.getrlimit(getattr(r, name)))`;
    const res = await runPython(code, {
      rlimits: { cpuSeconds: 7, fileSizeBytes: 123456, openFiles: 33, addressSpaceBytes: 3 << 30 },
    });
    assert.equal(res.stderr, "");
    assert.equal(
      res.stdout,
      `RLIMIT_CPU 7 7\nRLIMIT_FSIZE 123456 123456\nRLIMIT_NOFILE 33 33\nRLIMIT_CORE 0 0\nRLIMIT_AS ${3 << 30} ${3 << 30}\n`,
    );
  });

  it("a write past the file-size limit fails with EFBIG", async () => {
    const res = await runPython(
      "import errno\ntry:\n  open('f', 'wb').write(b'x' * 200000)\nexcept OSError as e:\n  print(errno.errorcode[e.errno])",
      { rlimits: { fileSizeBytes: 100000 } },
    );
    assert.equal(res.stdout, "EFBIG\n");
  });

  it("a CPU loop is killed by the kernel at the CPU-seconds limit", async () => {
    const res = await runPython("while True: pass", { rlimits: { cpuSeconds: 1 } });
    assert.ok(res.signal === "SIGXCPU" || res.signal === "SIGKILL", String(res.signal));
    assert.equal(res.timedOut, false);
  });

  it("with no descriptors to spare, open() fails with EMFILE", async () => {
    const res = await runPython(
      "import errno\nfs=[]\ntry:\n  while True: fs.append(open('/dev/null'))\nexcept OSError as e:\n  print(errno.errorcode[e.errno], len(fs) < 40)",
      { rlimits: { openFiles: 40 } },
    );
    assert.equal(res.stdout, "EMFILE True\n");
  });
});

describe("memory cap", () => {
  const bomb = "x = []\nwhile True: x.append(bytearray(1 << 20))";

  it(
    "uses a cgroup when the host can make one, and the OOM killer ends the jail",
    { skip: !cgroupSupport().memoryParent && "no cgroup v1 memory controller we may use" },
    async () => {
      const jail = await spawnJailed(pythonSpec(bomb, { memoryBytes: 64 << 20 }));
      assert.equal(jail.memoryMechanism, "cgroup");
      const res = await collect(jail);
      assert.equal(res.oomKilled, true);
      assert.equal(res.signal, "SIGKILL");
      assert.ok(res.peakMemoryBytes !== undefined && res.peakMemoryBytes <= 64 << 20);
    },
  );

  it("falls back to RLIMIT_AS and says so when no cgroup is wanted; Python gets MemoryError", async () => {
    const jail = await spawnJailed(
      pythonSpec(`try:\n  ${bomb.replace("\n", "\n  ")}\nexcept MemoryError:\n  print('MemoryError', len(x) < 300)`, {
        rlimits: { addressSpaceBytes: 256 << 20 },
      }),
    );
    assert.equal(jail.memoryMechanism, "rlimit");
    const res = await collect(jail);
    assert.equal(res.stdout, "MemoryError True\n");
    assert.equal(res.oomKilled, false);
  });

  it(
    "caps threads with pids.max",
    { skip: !cgroupSupport().pidsParent && "no cgroup v1 pids controller we may use" },
    async () => {
      const code =
        "import threading, time\nn = 0\ntry:\n  while True:\n    threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); n += 1\nexcept RuntimeError as e:\n  print(n, e)";
      const res = await runPython(code, { pidsMax: 10 });
      // the main thread plus 9 more; bwrap's reaper lives in the same cgroup
      assert.match(res.stdout, /^[0-9] can't start new thread\n$/);
    },
  );
});

describe("wall-clock kill", () => {
  it("kills the whole jail at the deadline and reports timedOut; nothing is left behind", async () => {
    const jail = await spawnJailed(
      pythonSpec("import time; print('up', flush=True); time.sleep(60)", { wallClockMs: 500 }),
    );
    const res = await collect(jail);
    assert.equal(res.stdout, "up\n");
    assert.equal(res.timedOut, true);
    assert.equal(res.signal, "SIGKILL");
    assert.equal(existsSync(`/proc/${jail.pid}`), false);
  });

  it("kill() and disposal end a running jail at once, idempotently", async () => {
    let pid: number;
    {
      await using jail = await spawnJailed(pythonSpec("import time; time.sleep(60)"));
      pid = jail.pid;
      jail.kill();
      jail.kill();
    }
    assert.equal(existsSync(`/proc/${pid}`), false);
  });

  it(
    "removes its cgroup when it ends",
    { skip: !(isRoot() && cgroupSupport().memoryParent) && "no cgroup" },
    async () => {
      const parent = cgroupSupport().memoryParent!;
      const ours = () => readdirSync(parent).filter((d) => d.startsWith(`wasmcell-${process.pid}-`));
      const jail = await spawnJailed(
        pythonSpec("import time; print('ready', flush=True); time.sleep(0.3)", { memoryBytes: 64 << 20 }),
      );
      await new Promise((r) => jail.child.stdout.once("data", r));
      assert.equal(ours().length, 1);
      const [dir] = ours();
      assert.match(readFileSync(`${parent}/${dir}/cgroup.procs`, "utf8"), /^\d+\n/);
      await collect(jail);
      assert.deepEqual(ours(), []);
    },
  );
});
