// Parked runs: a run that awaits a host function takes no turn of its thread, so a pool of one thread
// that runs one run at a time (`runsPerWorker: 1`) still has every such run waiting at once. Asserted
// with a barrier, not timings: the host function answers only once every run's call has arrived.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ThreadEngine } from "../../../../src/engines/quickjs/threads/threads.ts";
import { resolveOptions, resolveRequest } from "../../../../src/options/index.ts";
import type { HostFunction } from "../../../../src/core/types.ts";

const RUNS = 24;

async function withEngine(maxParked: number, body: (engine: ThreadEngine) => Promise<void>): Promise<void> {
  const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 1, maxParked, maxQueue: RUNS });
  await engine.warm();
  try {
    await body(engine);
  } finally {
    await engine.close();
  }
}

const request = (wait: HostFunction, timeoutMs: number) =>
  resolveRequest(
    { language: "javascript", code: "const r = await wait(); r + 1", limits: { timeoutMs } },
    resolveOptions({ javascript: { hostFunctions: { wait } } }),
  );

describe("parked runs (quickjs thread pool)", () => {
  it("runs awaiting a host function all wait at once on one thread that runs one run at a time", async () => {
    await withEngine(RUNS, async (engine) => {
      let arrived = 0;
      let open!: () => void;
      const all = new Promise<void>((r) => (open = r));
      const wait: HostFunction = async () => {
        if (++arrived === RUNS) open();
        await all;
        return 41;
      };
      let parkedSeen = 0;
      const watching = setInterval(() => (parkedSeen = Math.max(parkedSeen, engine.admission.parked)), 1);
      const results = await Promise.all(Array.from({ length: RUNS }, () => engine.run(request(wait, 60_000))));
      clearInterval(watching);
      assert.deepEqual(
        results.map((r) => (r.ok ? r.value : r.error.message)),
        results.map(() => 42),
      );
      assert.ok(parkedSeen > 1, `runs were counted as parked (at most ${parkedSeen} at once)`);
      assert.deepEqual(engine.admission, { running: 0, parked: 0, waiting: 0 });
      assert.equal(engine.threads, 2, "no thread was added for them (one worker and its spare)");
    });
  });

  it("with maxParked 0 a waiting run keeps its thread's turn: one call at a time", async () => {
    await withEngine(0, async (engine) => {
      let inFlight = 0;
      let most = 0;
      const wait: HostFunction = async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return 41;
      };
      const results = await Promise.all(Array.from({ length: 6 }, () => engine.run(request(wait, 60_000))));
      assert.ok(results.every((r) => r.ok && r.value === 42));
      assert.equal(most, 1);
    });
  });
});
