// Threat: one line of guest code freezes the host. QuickJS's C builtins do not poll the interrupt
// handler inside their loops, so `indexOf` over a 2^32 array-like (or a Proxy with a million keys) runs
// for minutes past any deadline, and nothing on the same thread can stop it. With the thread pool the
// host's thread never runs guest code: its event loop keeps turning, the run ends as `timeout` within
// the deadline plus the kill grace (its worker terminated), and the next run is served by the spare.
// In-process mode cannot stop these (documented in README); the threat applies to the thread pool.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { GRACE } from "../../src/kit/deadline.ts";

const TIMEOUT_MS = 300;
const HANGS: [string, string][] = [
  ["indexOf over a 2^32 array-like", 'Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")'],
  ["lastIndexOf over a 2^32 array-like", 'Array.prototype.lastIndexOf.call({ length: 2 ** 32 - 1 }, "x")'],
  ["includes over a 2^32 array-like", 'Array.prototype.includes.call({ length: 2 ** 32 - 1 }, "x")'],
  [
    "a Proxy with 2^20 ownKeys",
    "const keys = Array.from({ length: 2 ** 20 }, (_, i) => 'k' + i);\n" +
      "Object.keys(new Proxy({}, { ownKeys: () => keys, getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }) }))",
  ],
  [
    "a sort with a slow comparator",
    "const a = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 5000);\n" +
      "a.sort((x, y) => { for (let i = 0; i < 1e5; i++); return x - y; })",
  ],
];

describe("quickjs (thread)", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ javascript: { isolation: "thread" } });
    await sandbox.run({ language: "javascript", code: "1" }); // start the pool
  });
  after(() => sandbox.close());

  for (const [what, code] of HANGS) {
    it(`${what} ends as timeout while the host's event loop keeps turning; the next run works`, async () => {
      let last = performance.now();
      let maxGap = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        maxGap = Math.max(maxGap, now - last);
        last = now;
      }, 10);
      const started = performance.now();
      const r = await sandbox.run({ language: "javascript", code, limits: { timeoutMs: TIMEOUT_MS } });
      const took = performance.now() - started;
      clearInterval(tick);
      assert.equal(!r.ok && r.error.kind, "timeout", JSON.stringify(!r.ok && r.error));
      // Generous bounds (a shared, loaded machine): the point is seconds-versus-minutes, not a benchmark.
      assert.ok(took < TIMEOUT_MS + GRACE.threadKillMs + 1500, `ended after ${took.toFixed(0)} ms`);
      assert.ok(maxGap < 250, `the host's event loop stalled for ${maxGap.toFixed(0)} ms`);
      const next = await sandbox.run({ language: "javascript", code: "[1, 2, 3].indexOf(3)" });
      assert.equal(next.ok && next.value, 2);
    });
  }
});
