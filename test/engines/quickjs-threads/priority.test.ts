// Thread priorities (src/engines/quickjs-threads/priority.ts): what may be reniced, when demotion is on,
// and that a process which cannot put a lowered thread back never lowers one. The checks without
// CAP_SYS_NICE run in a child started by setpriv with the capability dropped (the suite runs as root).
import assert from "node:assert/strict";
import { getPriority } from "node:os";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { mayRestorePriority, setThreadNice, threadNice } from "../../../src/engines/quickjs-threads/priority.ts";
import { InvalidOptionError } from "../../../src/errors.ts";
import { resolveOptions } from "../../../src/options.ts";
import { runNode } from "../../helpers/process.ts";

const linux = process.platform === "linux";
const threads = pathToFileURL(
  new URL("../../../src/engines/quickjs-threads/threads.ts", import.meta.url).pathname,
).href;

/** Starts a pool with `setting` in a child run through `via` (setpriv); prints what happened. */
async function poolIn(via: string[], setting: string): Promise<string> {
  const script = `
    const { ThreadEngine } = await import(${JSON.stringify(threads)});
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 1, maxQueue: 1 }, undefined, undefined, { demoteCpuBound: ${setting} });
    try { await engine.warm(); console.log("demotes=" + engine.demotes); }
    catch (e) { console.log(e.name + ": " + e.message); }
    await engine.destroy();`;
  const ran = await runNode(["--input-type=module", "-e", script], { via });
  return ran.stdout.trim() || ran.stderr.trim();
}
const NO_NICE_CAP = ["setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice", "--"];

describe("thread priorities", { skip: linux ? false : "thread priorities are Linux-only" }, () => {
  it("where a lowered thread can come back (this suite runs as root), the probe says so", async () => {
    assert.equal(await mayRestorePriority(), true);
  });

  it("setThreadNice refuses ids that are not threads of this process, and leaves them alone", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 40]) assert.equal(setThreadNice(bad, 19), false, String(bad));
    // pid 1 is a thread of another process (init, or this namespace's first process)
    if (process.pid !== 1) {
      const before = getPriority(1);
      assert.equal(setThreadNice(1, 19), false);
      assert.equal(getPriority(1), before);
      assert.equal(threadNice(1), undefined);
    }
    assert.equal(threadNice(process.pid), getPriority(process.pid));
  });

  it(
    "the probe works in a process whose code is ESM by flag (--input-type=module, which workers inherit)",
    { skip: process.getuid?.() === 0 ? false : "needs root (CAP_SYS_NICE) for the probe to succeed" },
    async () => {
      // poolIn's child runs with --input-type=module: an eval'd probe that inherited it had no `require`.
      assert.equal(await poolIn([], '"auto"'), "demotes=true");
      assert.equal(await poolIn([], "true"), "demotes=true");
    },
  );

  it('without CAP_SYS_NICE, "auto" does not demote and true is refused naming the nice limit', async () => {
    assert.equal(await poolIn(NO_NICE_CAP, '"auto"'), "demotes=false");
    const refused = await poolIn(NO_NICE_CAP, "true");
    assert.match(refused, /^InvalidOptionError: .*javascript\.demoteCpuBound.*ulimit -e 20/);
    assert.equal(await poolIn(NO_NICE_CAP, "false"), "demotes=false");
  });

  it("a malformed setting is an InvalidOptionError naming the field", () => {
    for (const bad of ["yes", 1, null]) {
      assert.throws(
        () => resolveOptions({ javascript: { demoteCpuBound: bad as never } }),
        (e: unknown) => e instanceof InvalidOptionError && e.message.includes("javascript.demoteCpuBound"),
      );
    }
    assert.equal(resolveOptions({}).javascript.demoteCpuBound, "auto");
  });
});
