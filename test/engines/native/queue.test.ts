// The native tier's concurrency bound: at most `python.pool` runs hold a jail at once, at most
// `python.maxQueue` wait, the rest are refused with QueueFullError; a waiting run can be aborted.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createEngine, type NativeEngine } from "../../../src/engines/native/index.ts";
import { QueueFullError } from "../../../src/core/errors.ts";
import { resolveOptions, resolveRequest } from "../../../src/options/index.ts";
import type { RunRequest } from "../../../src/core/types.ts";

const options = resolveOptions({ python: { engine: "native", pool: 2, maxQueue: 3 }, seal: { seccomp: "kill" } });
const request = (code: string, extra: Partial<RunRequest> = {}) =>
  resolveRequest({ language: "python", engine: "native", code, limits: { timeoutMs: 20_000 }, ...extra }, options);

describe("native engine: concurrency bound", () => {
  let engine: NativeEngine | undefined;
  after(async () => engine?.close());

  it("runs python.pool at once, queues up to python.maxQueue, refuses the next with QueueFullError", async () => {
    engine = (await createEngine(options)) as NativeEngine;
    const runs = [0, 1, 2, 3, 4].map((i) => engine!.run(request(`print(${i})`)));
    // Taking a free slot is synchronous, so the split is exact right after the calls.
    assert.deepEqual(engine.slots.stats, { idle: 0, busy: 2, starting: 0, waiting: 3 });
    await assert.rejects(engine.run(request("print('sixth')")), QueueFullError);
    const results = await Promise.all(runs);
    assert.deepEqual(
      results.map((r) => [r.ok, r.stdout]),
      [0, 1, 2, 3, 4].map((i) => [true, `${i}\n`]),
    );
    assert.deepEqual(engine.slots.stats, { idle: 2, busy: 0, starting: 0, waiting: 0 });
  });

  it("a run aborted while it waits leaves the queue as kind aborted, without a jail", async () => {
    engine ??= (await createEngine(options)) as NativeEngine;
    const holders = [new AbortController(), new AbortController()];
    const busy = holders.map((c) => engine!.run(request("import time\ntime.sleep(30)", { signal: c.signal })));
    const waiter = new AbortController();
    const queued = engine.run(request("print('never')", { signal: waiter.signal }));
    assert.equal(engine.slots.stats.waiting, 1);
    waiter.abort();
    const r = await queued;
    assert.equal(!r.ok && r.error.kind, "aborted");
    assert.match(!r.ok ? r.error.message : "", /waited for a free slot/);
    assert.equal(r.stdout, "");
    assert.equal(engine.slots.stats.waiting, 0);
    for (const c of holders) c.abort();
    assert.deepEqual(
      (await Promise.all(busy)).map((b) => !b.ok && b.error.kind),
      ["aborted", "aborted"],
    );
    const next = await engine.run(request("6 * 7"));
    assert.equal(next.ok && next.value, 42);
  });
});
