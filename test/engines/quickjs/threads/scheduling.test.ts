// Scheduling in the QuickJS thread pool: a CPU-bound run holds its own thread and nobody else's. Runs
// that would wait behind it are taken back and sent elsewhere, the pool grows overflow threads up to
// `maxWorkers` while every thread is stalled, and never past it. Order, not time, is asserted: the
// benign run must finish while the loop beside it is still spinning.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EventInput } from "../../../../src/core/events.ts";
import { ThreadEngine, type PoolSize } from "../../../../src/engines/quickjs/threads/threads.ts";
import { resolveOptions, resolveRequest } from "../../../../src/options/index.ts";
import type { RunResult } from "../../../../src/core/types.ts";

const options = resolveOptions({});
const request = (code: string, timeoutMs = 5_000) =>
  resolveRequest({ language: "javascript", code, limits: { timeoutMs } }, options);
const LOOP = "while (true) {}";

async function withEngine(size: Partial<PoolSize>, body: (engine: ThreadEngine) => Promise<void>): Promise<void> {
  const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 8, maxQueue: 64, ...size });
  await engine.warm();
  try {
    await body(engine);
  } finally {
    await engine.close();
  }
}

/** Resolves with the run's result and whether `other` had settled by then. */
async function race(run: Promise<RunResult>, other: Promise<unknown>): Promise<{ result: RunResult; first: boolean }> {
  let otherDone = false;
  void other.then(() => (otherDone = true));
  const result = await run;
  return { result, first: !otherDone };
}

describe("quickjs thread pool scheduling", () => {
  it("a run admitted while the only thread spins gets an overflow thread and finishes first", async () => {
    await withEngine({ workers: 1, maxWorkers: 2 }, async (engine) => {
      const loop = engine.run(request(LOOP, 1_500));
      // Posted after the loop has begun: the pool sees the stalled thread and grows.
      await new Promise((r) => setTimeout(r, 200));
      const { result, first } = await race(engine.run(request("6 * 7")), loop);
      assert.equal(result.ok && result.value, 42);
      assert.ok(first, "the benign run finished while the loop was still spinning");
      const l = await loop;
      assert.equal(!l.ok && l.error.kind, "timeout");
      assert.equal(engine.grown, 1);
      assert.equal(engine.kills, 0, "the loop was interrupted in its thread, nothing was terminated");
    });
  });

  it("runs queued on a thread that then stalls are taken back and run elsewhere, once each", async () => {
    await withEngine({ workers: 1, maxWorkers: 2 }, async (engine) => {
      // All posted at once to the one thread: the loop first, the counters behind it in its queue.
      const loop = engine.run(request(LOOP, 1_500));
      const behind = Array.from({ length: 4 }, (_, i) =>
        engine.run(request(`globalThis.seen = (globalThis.seen ?? 0) + 1; [${i}, globalThis.seen]`)),
      );
      let loopDone = false;
      void loop.then(() => (loopDone = true));
      const results = await Promise.all(behind);
      assert.equal(loopDone, false, "they did not wait for the loop");
      // Each ran exactly once, in a fresh context (a run that started twice would see 2).
      assert.deepEqual(
        results.map((r) => r.ok && r.value),
        [
          [0, 1],
          [1, 1],
          [2, 1],
          [3, 1],
        ],
      );
      assert.ok(engine.moved >= 1, `runs were taken back from the stalled thread (moved ${engine.moved})`);
      await loop;
    });
  });

  it("grows no further than maxWorkers: past it runs wait on the host and still finish", async () => {
    await withEngine({ workers: 1, maxWorkers: 2, runsPerWorker: 1 }, async (engine) => {
      const loops = [engine.run(request(LOOP, 600)), engine.run(request(LOOP, 600))];
      const waiting = engine.run(request("'after'"));
      let most = 0;
      const sample = setInterval(() => (most = Math.max(most, engine.threads)), 5);
      const w = await waiting;
      clearInterval(sample);
      assert.equal(w.ok && w.value, "after");
      assert.ok(most <= 3, `at most maxWorkers threads and the spare (saw ${most})`);
      assert.ok(engine.overflowThreads <= 1);
      for (const l of await Promise.all(loops)) assert.equal(!l.ok && l.error.kind, "timeout");
    });
  });

  it("runsPerWorker 1: a run never shares a thread, so a loop cannot eat a benign run's deadline", async () => {
    await withEngine({ workers: 2, maxWorkers: 4, runsPerWorker: 1 }, async (engine) => {
      // Short deadlines: a benign run queued on a spinning thread would time out on its own clock.
      const runs = Array.from({ length: 12 }, (_, i) => engine.run(request(i % 3 === 0 ? LOOP : `${i}`, 300)));
      const results = await Promise.all(runs);
      results.forEach((r, i) => {
        if (i % 3 === 0) assert.equal(!r.ok && r.error.kind, "timeout");
        else assert.equal(r.ok && r.value, i, `run ${i}: ${JSON.stringify(!r.ok && r.error)}`);
      });
    });
  });

  it("a worker terminated at its deadline is a restart on the event channel; an interrupted loop is not", async () => {
    const events: EventInput[] = [];
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 8, maxQueue: 4 }, undefined, (e) =>
      events.push(e),
    );
    await engine.warm();
    try {
      await engine.run(request(LOOP, 100));
      assert.equal(events.length, 0);
      const hang = await engine.run(request('Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")', 100));
      assert.equal(!hang.ok && hang.error.kind, "timeout");
      assert.deepEqual(
        events.map((e) => [e.type, e.engine]),
        [["restart", "quickjs"]],
      );
    } finally {
      await engine.close();
    }
    assert.equal(events.length, 1, "closing the engine is not a restart");
  });
});
