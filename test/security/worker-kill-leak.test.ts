// Threat: wearing the host down by forcing kills. Every run that hangs in a C builtin costs a worker
// thread (terminated past its deadline, replaced by the spare). 200 of them in a row must leave the
// same number of live threads and no growing memory: a terminated worker's thread, its WASM memory and
// its port are all gone.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { ThreadEngine } from "../../src/engines/quickjs/threads/threads.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";

const KILLS = Number(process.env.WASMCELL_KILLS ?? 200);
/** OS threads of this process (Linux), or undefined elsewhere. */
function osThreads(): number | undefined {
  try {
    return readdirSync("/proc/self/task").length;
  } catch {
    return undefined;
  }
}

describe("quickjs (thread)", () => {
  it(`${KILLS} workers killed mid-run leave no thread and no memory behind`, async () => {
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 8, maxQueue: 4 });
    await engine.warm();
    const options = resolveOptions({});
    const hang = resolveRequest(
      {
        language: "javascript",
        code: 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")',
        limits: { timeoutMs: 20 },
      },
      options,
    );
    const ok = resolveRequest({ language: "javascript", code: "6 * 7" }, options);
    try {
      // A few kills first, so lazily created thread pools (V8 platform, libuv) are already counted.
      for (let i = 0; i < 5; i++) await engine.run(hang);
      await engine.run(ok);
      const threadsBefore = osThreads();
      const rssBefore = process.memoryUsage().rss;
      const killsBefore = engine.kills;
      for (let i = 0; i < KILLS; i++) {
        const r = await engine.run(hang);
        assert.equal(!r.ok && r.error.kind, "timeout");
      }
      assert.equal(engine.kills - killsBefore, KILLS, "every hang cost exactly one worker");
      const r = await engine.run(ok);
      assert.equal(r.ok && r.value, 42);
      await new Promise((resolve) => setTimeout(resolve, 500)); // terminated threads finish exiting
      assert.equal(engine.threads, 2, "one worker and one spare, as before");
      const threadsAfter = osThreads();
      if (threadsBefore !== undefined && threadsAfter !== undefined)
        assert.ok(threadsAfter <= threadsBefore + 2, `threads: ${threadsBefore} before, ${threadsAfter} after`);
      const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      // Loose: a leaked worker costs tens of MB (its isolate plus two QuickJS modules), 200 of them GBs.
      assert.ok(grownMb < 300, `RSS grew ${grownMb.toFixed(0)} MB over ${KILLS} kills`);
    } finally {
      await engine.close();
    }
  });
});
