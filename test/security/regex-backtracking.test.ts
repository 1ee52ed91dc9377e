// Threat: catastrophic regex backtracking holding the thread. QuickJS's regex engine (libregexp) polls
// the interrupt handler while it backtracks, so the deadline holds. Builtins that do not poll (JSON,
// sort, string building) are bounded too: the engine shortens QuickJS's polling window to one call
// once calls get slow, so a loop of expensive builtins overruns by about one call, not 10,000.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { timeoutMs: 300 } });
  });
  after(() => sandbox.close());

  for (const [name, code] of Object.entries({
    "nested quantifiers": `/(a+)+$/.test("a".repeat(40) + "b")`,
    "alternation blow-up": `/^(a|a)*$/.test("a".repeat(40) + "b")`,
    "replace with a bad pattern": `"x".repeat(30).replace(/(x+x+)+y/, "z")`,
  })) {
    it(`stops ${name} with kind timeout`, async () => {
      const started = Date.now();
      const r = await sandbox.run({ language: "javascript", code });
      assert.equal(!r.ok && r.error.kind, "timeout");
      // Not a timing assertion on speed: it proves the run did not go on for the minutes the pattern needs.
      assert.ok(Date.now() - started < 30_000);
    });
  }

  it("a loop of non-polling builtins is still stopped as timeout", async () => {
    const started = Date.now();
    const r = await sandbox.run({
      language: "javascript",
      code: `const big = Array.from({ length: 2e5 }, (_, i) => ({ i })); for (;;) JSON.stringify(big)`,
    });
    assert.equal(!r.ok && r.error.kind, "timeout");
    // With QuickJS's default polling this loop would run for ~10,000 calls (minutes).
    assert.ok(Date.now() - started < 30_000);
  });
});
