// Threat: a run is failed for memory its neighbours allocated. The runs of one worker thread share one
// QuickJS module, and the engine watches the module's linear memory as a backstop to QuickJS's own
// limit: growth past a run's `memoryMb` (plus slack) is a `memory` failure. Counted from when the run
// began, that growth included every allocation of the runs parked beside it, so with enough of them
// (thousands, when runs wait on host functions) an innocent run that allocated 1 MB was ended as
// `memory`. Only growth while a run's own code runs counts against it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ThreadEngine } from "../../src/engines/quickjs/threads/threads.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import type { HostFunction } from "../../src/core/types.ts";

const RUNS = 96;

describe("a run is failed for memory its neighbours allocated (quickjs thread pool)", () => {
  it("runs parked on one thread, each holding 1 MB under an 8 MB limit, all answer", async () => {
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 8, maxParked: RUNS, maxQueue: RUNS });
    await engine.warm();
    try {
      // Every run holds its megabyte until all of them hold theirs: together 96 MB, past any one's cap.
      let arrived = 0;
      let open!: () => void;
      const all = new Promise<void>((r) => (open = r));
      const wait: HostFunction = async () => {
        if (++arrived === RUNS) open();
        await all;
        return 1;
      };
      const options = resolveOptions({ javascript: { hostFunctions: { wait } } });
      const code = "const keep = new Uint8Array(1 << 20).fill(7); await wait(); keep[12345] + keep.length";
      const results = await Promise.all(
        Array.from({ length: RUNS }, () =>
          engine.run(
            resolveRequest({ language: "javascript", code, limits: { memoryMb: 8, timeoutMs: 120_000 } }, options),
          ),
        ),
      );
      const failed = results.filter((r) => !r.ok).map((r) => !r.ok && `${r.error.kind}: ${r.error.message}`);
      assert.deepEqual(failed, [], `${failed.length} runs failed`);
      assert.ok(results.every((r) => r.ok && r.value === 7 + (1 << 20)));
    } finally {
      await engine.close();
    }
  });

  it("a run that allocates past its own limit still fails as memory", async () => {
    const engine = new ThreadEngine({ workers: 1, maxWorkers: 1, runsPerWorker: 8, maxParked: 8, maxQueue: 8 });
    await engine.warm();
    try {
      const r = await engine.run(
        resolveRequest(
          {
            language: "javascript",
            code: "const a = []; for (;;) a.push(new Uint8Array(1 << 20))",
            limits: { memoryMb: 8, timeoutMs: 30_000 },
          },
          resolveOptions({}),
        ),
      );
      assert.equal(!r.ok && r.error.kind, "memory");
    } finally {
      await engine.close();
    }
  });
});
