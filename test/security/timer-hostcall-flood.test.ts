// Threat: exhausting the host through timers or host calls. Each run may create maxTimers timers and
// make maxHostCalls host calls; past that, the call throws inside the guest (catchable, like any error).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  let calls = 0;
  before(async () => {
    sandbox = await createSandbox({
      limits: { maxTimers: 10, maxHostCalls: 5, timeoutMs: 2000 },
      javascript: { hostFunctions: { ping: () => ++calls } },
    });
  });
  after(() => sandbox.close());

  it("the timer after maxTimers throws in the guest", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: `let made = 0; try { for (;;) { setTimeout(() => {}, 1); made++; } } catch (e) { [made, e.message] }`,
    });
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, [10, "too many timers: this run may create 10 (limits.maxTimers)"]);
  });

  it("an uncaught timer flood fails the run as runtime with the limit named", async () => {
    const r = await sandbox.run({ language: "javascript", code: `for (;;) setInterval(() => {}, 1000)` });
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.match(!r.ok ? r.error.message : "", /limits\.maxTimers/);
  });

  it("the host call after maxHostCalls throws in the guest, and the host saw only maxHostCalls", async () => {
    calls = 0;
    const r = await sandbox.run({
      language: "javascript",
      code: `let n = 0; try { for (;;) { await ping(); n++; } } catch (e) { [n, e.message] }`,
    });
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, [5, "too many host calls: this run may make 5 (limits.maxHostCalls)"]);
    assert.equal(calls, 5);
  });

  it("limits are per run", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: `await ping(); await new Promise((r) => setTimeout(r, 1)); "ok"`,
    });
    assert.equal(r.ok && r.value, "ok");
  });
});
