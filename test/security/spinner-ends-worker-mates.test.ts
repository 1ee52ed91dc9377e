// Threat: one tenant's `while (true) {}` ends the runs that share its worker thread. Runs that await a
// host function are packed onto few threads (`javascript.runsPerWorker`); a spinner posted beside them
// holds that thread until its deadline, and the runs waiting on it used to be ended with it — as
// `timeout` ("look for an endless loop", though they never looped) or `crashed` when the thread was
// killed for the spinner — while the spinner itself could be reported `crashed`. A run's failure never
// ends, fails or times out another run: every innocent run answers, and the spinner is `timeout`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

const WAITERS = 40;
const TIMEOUT_MS = 3_000;
const WAIT = "const r = await slow(); r + 1";

const slow = () => new Promise((r) => setTimeout(() => r(41), 1_000));
const ISOLATIONS = {
  // A worker takes 8 runs: the spinner shares its thread with runs awaiting `slow`.
  thread: { isolation: "thread", workers: 1, maxWorkers: 2, runsPerWorker: 8, hostFunctions: { slow } },
  // Every run shares the caller's thread.
  "in-process": { isolation: "in-process", hostFunctions: { slow } },
} as const;

for (const [name, javascript] of Object.entries(ISOLATIONS))
  describe(`a spinning run ends its worker-mates (quickjs ${name})`, () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await createSandbox({ javascript });
    });
    after(() => sandbox.close());

    it("every run awaiting a host function answers; the spinner alone is timeout", async () => {
      const run = (code: string) => sandbox.run({ language: "javascript", code, limits: { timeoutMs: TIMEOUT_MS } });
      const runs: Promise<Awaited<ReturnType<typeof run>>>[] = [];
      for (let i = 0; i < WAITERS; i++) {
        runs.push(run(WAIT));
        // The spinner lands among the waiters, on a thread that already holds some of them.
        if (i === 3) runs.push(run("while (true) {}"));
      }
      const results = await Promise.all(runs);
      const spinner = results.splice(4, 1)[0]!;
      assert.equal(!spinner.ok && spinner.error.kind, "timeout", JSON.stringify(!spinner.ok && spinner.error));
      const blamed = results.filter((r) => !r.ok).map((r) => !r.ok && `${r.error.kind}: ${r.error.message}`);
      assert.deepEqual(blamed, [], `${blamed.length} innocent runs failed`);
      for (const r of results) assert.equal(r.ok && r.value, 42);
    });
  });
