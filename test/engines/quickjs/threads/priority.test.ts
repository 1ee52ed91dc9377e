// Thread priorities (src/engines/quickjs/threads/priority.ts): what may be reniced, when demotion is on,
// and that a process which cannot put a lowered thread back never lowers one. The checks without
// CAP_SYS_NICE run in a child started by setpriv with the capability dropped (the suite runs as root).
import assert from "node:assert/strict";
import { getPriority } from "node:os";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { mayRestorePriority, setThreadNice, threadNice } from "../../../../src/engines/quickjs/threads/priority.ts";
import { InvalidOptionError } from "../../../../src/core/errors.ts";
import { resolveOptions } from "../../../../src/options/index.ts";
import { runNode } from "../../../helpers/process.ts";

const linux = process.platform === "linux";
const threads = pathToFileURL(
  new URL("../../../../src/engines/quickjs/threads/threads.ts", import.meta.url).pathname,
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
const options = pathToFileURL(new URL("../../../../src/options/index.ts", import.meta.url).pathname).href;
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

  it(
    "a thread whose priority cannot be put back takes no new run and retires once it is free",
    { skip: process.getuid?.() === 0 ? false : "needs root, to give up the right to restore priorities mid-run" },
    async () => {
      // The child setuid()s away from root after the pool is warm: a thread that lowers itself can never
      // come back (STUCK). The first run spins 200 ms (demoted: 2 ms of its own CPU past 2 ms of wall time,
      // which a loaded machine may take 20 ms to give it), then waits on a timer, still holding its
      // thread (runsPerWorker 2). Its second host call comes after its thread's event loop turned, so
      // the thread is STUCK by then; the next run must wait for it to retire and go to the warm spare,
      // not run at nice 19 beside it.
      const script = `
      const { ThreadEngine } = await import(${JSON.stringify(threads)});
      const { resolveOptions, resolveRequest } = await import(${JSON.stringify(options)});
      const o = resolveOptions({});
      let marks = 0;
      let stuck;
      const isStuck = new Promise((resolve) => (stuck = resolve));
      const mark = () => void (++marks === 2 && stuck());
      const req = (code) => resolveRequest({ language: "javascript", code, limits: { timeoutMs: 5000 }, hostFunctions: { mark } }, o);
      const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 2, maxQueue: 8 }, undefined, undefined, { demoteCpuBound: true });
      await engine.warm();
      process.setuid(65534);
      const order = [];
      const said = (r) => order.push(r.ok ? r.value : r.error.kind);
      const first = engine.run(req("const t = Date.now(); while (Date.now() - t < 200) {} await mark(); await mark(); await new Promise((r) => setTimeout(r, 600)); 'first'")).then(said);
      await isStuck;
      const next = engine.run(req("'next'")).then(said);
      await Promise.all([first, next]);
      console.log(JSON.stringify({ order, kills: engine.kills }));
      await engine.destroy();`;
      const ran = await runNode(["--input-type=module", "-e", script]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.deepEqual(JSON.parse(ran.stdout), { order: ["first", "next"], kills: 0 });
    },
  );

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
