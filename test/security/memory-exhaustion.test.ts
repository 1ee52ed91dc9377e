// Threat: allocation bombs exhausting the host's memory. Every shape must end as kind `memory`, the
// host must stay up, and the next run must work.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

const BOMBS: Record<string, string> = {
  "array of itself": "const a = []; while (true) a.push(a);",
  "array of objects": "const a = []; while (true) a.push({ x: 1 });",
  "string doubling": "let s = 'x'; while (true) s += s;",
  "one huge string": "'x'.repeat(2 ** 28)",
  "one huge typed array": "new Uint8Array(2 ** 31 - 1)",
  "many typed arrays": "const l = []; while (true) l.push(new Float64Array(1e4));",
  "Map": "const m = new Map(); let i = 0; while (true) m.set(i++, {});",
  "JSON": "let o = [0]; for (;;) o = JSON.parse(JSON.stringify([o, o, o]));",
};

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { memoryMb: 4, timeoutMs: 10_000 } });
  });
  after(() => sandbox.close());

  for (const [name, code] of Object.entries(BOMBS)) {
    it(`stops a ${name} bomb with kind memory`, async () => {
      const r = await sandbox.run({ language: "javascript", code });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "memory", JSON.stringify(!r.ok && r.error));
      assert.match(!r.ok ? r.error.message : "", /4 MB memory limit \(limits\.memoryMb\)/);
      const next = await sandbox.run({ language: "javascript", code: "6 * 7" });
      assert.equal(next.ok && next.value, 42);
    });
  }
});
