// Threat: escaping the deadline through asynchrony — promise-job loops, timers, intervals, host calls
// that never resolve, unsettled top-level awaits. One deadline covers all of it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  let signals: AbortSignal[] = [];
  before(async () => {
    sandbox = await createSandbox({
      limits: { timeoutMs: 200 },
      javascript: {
        hostFunctions: {
          never: (_args, { signal }) => {
            signals.push(signal);
            return new Promise(() => undefined);
          },
        },
      },
    });
  });
  after(() => sandbox.close());
  const js = (code: string) => sandbox.run({ language: "javascript", code });

  const cases: Record<string, string> = {
    "an await loop": "(async () => { while (true) await null })()",
    "a then-chain loop":
      "const loop = () => Promise.resolve().then(loop); loop(); await new Promise(() => setTimeout(() => {}, 1e6))",
    "a microtask loop": "const m = () => queueMicrotask(m); m()",
    "a busy timer callback": "setTimeout(() => { while (true) {} }, 1)",
    "an interval that never stops": "setInterval(() => {}, 1)",
    "a far-future timer": "setTimeout(() => {}, 1e9)",
    "a busy loop after top-level await": "await null; while (true) {}",
  };
  for (const [name, code] of Object.entries(cases)) {
    it(`stops ${name} with kind timeout`, async () => {
      const r = await js(code);
      assert.equal(!r.ok && r.error.kind, "timeout", JSON.stringify(!r.ok && r.error));
      assert.match(!r.ok ? r.error.message : "", /200 ms \(limits\.timeoutMs\)/);
    });
  }

  it("a host call that never resolves does not hold the run past the deadline, and its signal aborts", async () => {
    signals = [];
    const r = await js("await never()");
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(signals.length, 1);
    assert.equal(signals[0]!.aborted, true);
  });

  it("a promise nothing can settle fails at once instead of waiting for the deadline", async () => {
    const r = await js("await new Promise(() => {})");
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.match(!r.ok ? r.error.message : "", /can never settle/);
  });

  it("the caller's AbortSignal ends a waiting run as aborted", async () => {
    // (A synchronous busy loop blocks the host's event loop, so an abort scheduled there arrives only
    // once the deadline has stopped the loop; an already-aborted signal is seen at once.)
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const r = await sandbox.run({
      language: "javascript",
      code: "await new Promise((r) => setTimeout(r, 4000))",
      limits: { timeoutMs: 5000 },
      signal: controller.signal,
    });
    assert.equal(!r.ok && r.error.kind, "aborted");
    const pre = await sandbox.run({ language: "javascript", code: "while (true) {}", signal: AbortSignal.abort() });
    assert.equal(!pre.ok && pre.error.kind, "aborted");
  });
});
