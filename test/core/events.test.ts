// The event channel (src/core/events.ts): what a finished run tells by its result, and restarts counted once
// per thing replaced — a lost worker thread that took several runs down with it is one restart.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSandbox, type SandboxEvent } from "../../src/index.ts";
import { resultEvents, type EventInput } from "../../src/core/events.ts";
import { DEFAULT_LIMITS } from "../../src/options/index.ts";
import type { RunResult } from "../../src/core/types.ts";

const crashed: RunResult = {
  ok: false,
  language: "python",
  error: { kind: "crashed", name: "EngineCrash", message: "x" },
  stdout: "",
  stderr: "",
  outputTruncated: false,
  files: [],
  results: [],
  stats: { engine: "pyodide", wallMs: 1, outputBytes: 0 },
};

describe("events", () => {
  it("a crashed result is a restart only for engines that do not report their own", () => {
    const told: EventInput[] = [];
    resultEvents(crashed, DEFAULT_LIMITS, (e) => told.push(e));
    assert.deepEqual(
      told.map((e) => e.type),
      ["restart"],
    );
    told.length = 0;
    resultEvents(crashed, DEFAULT_LIMITS, (e) => told.push(e), false);
    assert.deepEqual(told, []);
  });

  it("one worker thread lost with two runs on it is one restart", async () => {
    const events: SandboxEvent[] = [];
    await using sandbox = await createSandbox({
      javascript: { workers: 1, maxWorkers: 1, runsPerWorker: 8 },
      onEvent: (e) => events.push(e),
    });
    await sandbox.run({ language: "javascript", code: "1" }); // the pool is up
    // A run parked on a timer beside a builtin that never polls: the thread is terminated at the
    // builtin's deadline and the parked run goes down with it.
    const parked = sandbox.run({
      language: "javascript",
      code: "await new Promise((r) => setTimeout(r, 3000)); 1",
      limits: { timeoutMs: 5000 },
    });
    await new Promise((r) => setTimeout(r, 100));
    const hang = await sandbox.run({
      language: "javascript",
      code: 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")',
      limits: { timeoutMs: 100 },
    });
    assert.equal(!hang.ok && hang.error.kind, "timeout");
    const lost = await parked;
    assert.equal(!lost.ok && lost.error.kind, "crashed");
    const restarts = events.filter((e) => e.type === "restart");
    assert.equal(restarts.length, 1, JSON.stringify(restarts));
  });
});
