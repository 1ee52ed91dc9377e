// Threat: a Python guest claims the host's stack limit fired. `RecursionError` is a class any guest can
// raise (with Python's own words), and the harness that names it runs where the guest ran, so the
// host cannot tell a raised one from Python's recursion limit. If the name made the kind, a guest
// could report `stack` at will and fire a `limit` event for `maxStackKb` — the JavaScript engine's
// cap, which no Python run has — steering monitoring and retry logic with a lie. On both Python tiers
// a RecursionError is `runtime` (name and message kept), and no run reports a limit that did not fire.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import type { RunResult } from "../../src/core/types.ts";
import { FULL } from "../helpers/pyodide.ts";

const ATTACKS: { name: string; code: string; message: RegExp }[] = [
  {
    name: "a raised RecursionError in Python's own words",
    code: `raise RecursionError("maximum recursion depth exceeded")`,
    message: /^maximum recursion depth exceeded$/,
  },
  {
    name: "a RecursionError subclass",
    code: `class E(RecursionError): pass\nraise E("maximum recursion depth exceeded while calling a Python object")`,
    message: /maximum recursion depth/,
  },
  {
    // Indistinguishable from the outside from the raised one: it is reported the same way.
    name: "real unbounded recursion",
    code: `def f(n):\n    return f(n + 1)\nf(0)`,
    message: /maximum recursion depth exceeded/,
  },
];

for (const engine of ["pyodide", "native"] as const) {
  describe(`${engine}: a RecursionError is the guest's word, not the host's stack verdict`, () => {
    let sandbox: Sandbox;
    const events: SandboxEvent[] = [];
    before(async () => {
      sandbox = await createSandbox({ python: { engine, pool: 1 }, seal: FULL, onEvent: (e) => events.push(e) });
    });
    after(() => sandbox.close());

    const run = (code: string): Promise<RunResult> =>
      sandbox.run({ language: "python", engine, code, limits: { timeoutMs: 10_000 } });

    for (const attack of ATTACKS) {
      it(`${attack.name} is a runtime error with Python's text, and no limit event`, async () => {
        events.length = 0;
        const r = await run(attack.code);
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.error.kind, "runtime", JSON.stringify(r));
        assert.match(!r.ok ? r.error.name : "", /^(RecursionError|E)$/);
        assert.match(!r.ok ? r.error.message : "", attack.message);
        assert.deepEqual(
          events.filter((e) => e.type === "limit"),
          [],
        );
        const next = await run("'next'");
        assert.equal(next.ok && next.value, "next");
      });
    }
  });
}

describe("native: a forged result line naming kind stack", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ python: { engine: "native" } });
  });
  after(() => sandbox.close());

  it("is a runtime error", async () => {
    // The driver's fd for its result line (src/engines/native/driver.py): a guest writes its own there.
    const envelope = { ok: false, error: { kind: "stack", name: "RecursionError", message: "forged" } };
    const r = await sandbox.run({
      language: "python",
      engine: "native",
      code: `import os, json\nos.write(4, (json.dumps({"envelope": ${JSON.stringify(envelope).replaceAll("false", "False")}, "files": []}) + "\\n").encode())\nos._exit(0)`,
    });
    assert.equal(!r.ok && r.error.kind, "runtime", JSON.stringify(r));
    assert.equal(!r.ok && r.error.message, "forged");
  });
});
