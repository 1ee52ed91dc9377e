// Threat: CPU loops starve the host and the short runs beside them. With more spinning guests than
// cores the kernel gives every thread an equal share, so the host's own thread (which parses requests
// and sends results) and a benign run get a sliver each. A thread held by one synchronous stretch lowers
// itself to nice 19 (src/engines/quickjs/threads/priority.ts) and is put back when the stretch ends or
// its deadline comes. Asserted from the kernel's own record of each thread's nice value, not timings.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { describe, it } from "node:test";
import { ThreadEngine } from "../../src/engines/quickjs/threads/threads.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";

const linux = process.platform === "linux";
const options = resolveOptions({});
const request = (code: string, timeoutMs: number) =>
  resolveRequest({ language: "javascript", code, limits: { timeoutMs } }, options);
const LOOP = "while (true) {}";

/** The nice value of every thread of this process, from /proc (field 19 of stat). */
function niceValues(): number[] {
  const out: number[] = [];
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "latin1");
      out.push(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
const demoted = () => niceValues().filter((n) => n === 19).length;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function withPool(demote: "auto" | boolean, body: (engine: ThreadEngine) => Promise<void>): Promise<void> {
  const engine = new ThreadEngine({ workers: 3, maxWorkers: 3, runsPerWorker: 1, maxQueue: 16 }, undefined, undefined, {
    demoteCpuBound: demote,
  });
  await engine.warm();
  try {
    await body(engine);
  } finally {
    await engine.close();
  }
}

describe("cpu starvation (quickjs thread pool)", { skip: linux ? false : "thread priorities are Linux-only" }, () => {
  const base = getPriority(process.pid);

  it("spinning threads drop to nice 19 while the host and a short run beside them stay at the base", async () => {
    await withPool("auto", async (engine) => {
      assert.equal(engine.demotes, true, "this test runs where priorities can be restored (root or ulimit -e 20)");
      const loops = [engine.run(request(LOOP, 3_000)), engine.run(request(LOOP, 3_000))];
      await until("both loops are demoted", () => demoted() === 2);
      assert.equal(getPriority(process.pid), base, "the host's thread keeps its priority");
      const short = await engine.run(request("let s = 0; for (let i = 0; i < 1000; i++) s += i; s", 3_000));
      assert.equal(short.ok && short.value, 499_500);
      assert.equal(demoted(), 2, "the short run's thread was not demoted");
      for (const r of await Promise.all(loops)) assert.equal(!r.ok && r.error.kind, "timeout");
      await until("every thread is back at the base", () => demoted() === 0);
      assert.ok(
        niceValues().every((n) => n === base),
        `nice values: ${niceValues().join(",")}`,
      );
      assert.equal(engine.kills, 0, "the loops stopped at their own interrupt, no thread was killed");
    });
  });

  it("a session's loop is demoted and its thread restored for the session's next run", async () => {
    await withPool("auto", async (engine) => {
      const session = await engine.openSession();
      const loop = session.run(request(LOOP, 1_000));
      await until("the session's loop is demoted", () => demoted() === 1);
      const r = await loop;
      assert.equal(!r.ok && r.error.kind, "timeout");
      await until("the thread is back at the base", () => demoted() === 0);
      const next = await session.run(request("1 + 1", 1_000));
      assert.equal(next.ok && next.value, 2);
      await session.close();
    });
  });

  it("the next run on a thread a loop was demoted on starts at the base priority", async () => {
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 1, maxQueue: 4 });
    await engine.warm();
    try {
      const loop = engine.run(request(LOOP, 500));
      await until("the loop is demoted", () => demoted() === 1);
      assert.equal((await loop).ok, false);
      // The next run asks the host to read every thread's nice value while it is running on that thread.
      let seen: number[] = [];
      const probe = resolveRequest(
        {
          language: "javascript",
          code: "await look(); 1",
          limits: { timeoutMs: 3_000 },
          hostFunctions: { look: () => void (seen = niceValues()) },
        },
        options,
      );
      const r = await engine.run(probe);
      assert.equal(r.ok && r.value, 1, JSON.stringify(r));
      assert.ok(seen.length > 0 && seen.every((n) => n === base), `nice values during the next run: ${seen.join(",")}`);
      assert.equal(engine.kills, 0, "the same thread served both runs");
    } finally {
      await engine.close();
    }
  });

  it("demoteCpuBound: false demotes nothing", async () => {
    await withPool(false, async (engine) => {
      assert.equal(engine.demotes, false);
      const loop = engine.run(request(LOOP, 600));
      let seen = 0;
      while (seen < 50) {
        assert.equal(demoted(), 0);
        seen++;
        await new Promise((r) => setTimeout(r, 5));
      }
      const r = await loop;
      assert.equal(!r.ok && r.error.kind, "timeout");
    });
  });
});
