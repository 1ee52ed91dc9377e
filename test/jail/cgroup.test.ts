// The jail's cgroups are named so that nothing else on the host can already hold the name: not a
// second copy of wasmcell loaded into the same process (two dependencies that each bundle it), not a
// process that had this pid before and was killed before it could remove its cgroups.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { JailCgroup } from "../../src/jail/cgroup.ts";
import { cgroupSupport, isRoot } from "../../src/jail/host.ts";

const support = cgroupSupport();
const skip = !(isRoot() && support.memoryParent) && "no cgroup v1 memory controller we may use";

describe("jail cgroup names", () => {
  it(
    "two copies of the jail module in one process make cgroups side by side (attack: a name collision refuses every jail)",
    { skip },
    async () => {
      const copy = (await import(`../../src/jail/cgroup.ts?copy=${Date.now()}`)) as { JailCgroup: typeof JailCgroup };
      assert.notEqual(copy.JailCgroup, JailCgroup, "a second module instance");
      const made: JailCgroup[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          made.push(JailCgroup.create(support, 64 * 1024 * 1024, 8));
          made.push(copy.JailCgroup.create(support, 64 * 1024 * 1024, 8));
        }
        assert.equal(new Set(made.map((c) => c.memoryDir)).size, 6);
      } finally {
        await Promise.all(made.map((c) => c.remove()));
      }
      const left = readdirSync(support.memoryParent!).filter((n) => n.startsWith(`wasmcell-${process.pid}-`));
      assert.deepEqual(left, []);
    },
  );
});

describe("a nested pair renewed for its next process", () => {
  it(
    "restarts its peak and its OOM count, and refuses while pages stay charged to it (attack: one child's memory blamed on the next)",
    { skip },
    async () => {
      const { spawn } = await import("node:child_process");
      const jail = JailCgroup.create(support, 256 * 1024 * 1024, 16);
      try {
        const pair = jail.child(64 * 1024 * 1024, 8)!;
        // A process that touches 32 MB, then one that goes past the pair's 64 MB cap.
        const inPair = async (code: string) => {
          const p = spawn("/usr/bin/python3", ["-c", `import sys; sys.stdin.read(1); ${code}`], { stdio: "pipe" });
          await new Promise((r) => p.once("spawn", r));
          pair.adopt(p.pid!);
          p.stdin.end("x");
          await new Promise((r) => p.once("exit", r));
        };
        await inPair("b = bytearray(32 << 20); b[::4096] = b'x' * len(b[::4096])");
        assert.ok(pair.stats().peakMemoryBytes! >= 32 << 20);
        assert.equal(pair.stats().oomKilled, false);
        await inPair("keep = []\nwhile True: keep.append(b'x' * (8 << 20))");
        assert.equal(pair.stats().oomKilled, true);
        for (let i = 0; i < 100 && pair.pids().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(pair.renew(64 * 1024 * 1024), true);
        assert.equal(pair.stats().oomKilled, false, "the kill was the last process's");
        assert.ok((pair.stats().peakMemoryBytes ?? 0) < 32 << 20, "the peak restarted");
        // Pages charged to the pair and still held (a file in a tmpfs it wrote, here a page-cache
        // file in /dev/shm) make it refuse: they would count against the next process.
        await inPair("open('/dev/shm/wasmcell-renew-test', 'wb').write(b'x' * (8 << 20))");
        try {
          assert.equal(pair.renew(4 * 1024 * 1024), false);
        } finally {
          (await import("node:fs")).rmSync("/dev/shm/wasmcell-renew-test", { force: true });
        }
      } finally {
        await jail.remove();
      }
    },
  );
});
