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
