// The uid drop: when the host is root, the jailed program's *kernel* uid (what the host sees in
// /proc/<pid>/status) is the unprivileged one, not 0 renamed inside a user namespace
// (docs/seal.md pitfall 10).
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { describe, it } from "node:test";
import { SealUnavailableError } from "../../src/core/errors.ts";
import { isRoot } from "../../src/jail/host.ts";
import { spawnJailed, type JailedProcess } from "../../src/jail/index.ts";
import { collect, layout, pythonSpec, TEST_SEAL } from "./helpers.ts";
import { jailReachableTempDir } from "../helpers/tmp.ts";

/** Host pids of every descendant of `pid`. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

async function kernelUidOfProgram(jail: JailedProcess): Promise<string> {
  // Wait for the program's "ready" line, then look at it from the host.
  await new Promise<void>((resolve) => jail.child.stdout.once("data", () => resolve()));
  const uids = [jail.pid, ...descendants(jail.pid)].map((p) =>
    /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1]?.trim(),
  );
  jail.kill();
  await jail.exited;
  return [...new Set(uids)].join(" | ");
}

describe("uid drop", { skip: !isRoot() && "the host is not root: there is nothing to drop" }, () => {
  const waiter = "import sys, time; print('ready', flush=True); time.sleep(30)";

  it("every process of the jail runs with kernel uid 65534", async () => {
    const jail = await spawnJailed(pythonSpec(waiter));
    assert.equal(jail.plan.uidDrop && jail.plan.uidDrop.uid, 65534);
    assert.equal(await kernelUidOfProgram(jail), "65534\t65534\t65534\t65534");
  });

  it("honours a custom uid/gid", async () => {
    const jail = await spawnJailed(
      pythonSpec(waiter, { seal: { ...TEST_SEAL, dropPrivileges: { uid: 4242, gid: 4243 } } }),
    );
    assert.equal(await kernelUidOfProgram(jail), "4242\t4242\t4242\t4242");
  });

  it("with dropPrivileges off, the kernel uid stays 0 (which is why the drop exists)", async () => {
    const jail = await spawnJailed(pythonSpec(waiter, { seal: { ...TEST_SEAL, dropPrivileges: false } }));
    assert.equal(await kernelUidOfProgram(jail), "0\t0\t0\t0");
  });

  it("refuses a bind the dropped uid cannot read, naming the layer and the path", async () => {
    const dir = jailReachableTempDir("wasmcell-private-"); // mode 0700, owned by root
    mkdirSync(`${dir}/data`);
    writeFileSync(`${dir}/data/x.txt`, "secret");
    try {
      await assert.rejects(
        spawnJailed(pythonSpec("print(1)", { roBinds: [{ host: `${dir}/data`, jail: "/data" }] })),
        (e: unknown) =>
          e instanceof SealUnavailableError &&
          e.layer === "dropPrivileges" &&
          e.message.includes(`directory ${dir} is not searchable (x) by uid 65534`),
      );
      // Once the path is world-readable the same bind works, and the file is visible read-only.
      chmodSync(dir, 0o755);
      const jail = await spawnJailed(
        pythonSpec("print(open('/data/x.txt').read())", {
          roBinds: [...layout.binds, { host: `${dir}/data`, jail: "/data" }],
        }),
      );
      const r = await collect(jail);
      assert.equal(r.stderr, "");
      assert.equal(r.stdout, "secret\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
