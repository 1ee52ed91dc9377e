// End to end through the front door (createSandbox / run / session), JavaScript and TypeScript part.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError, createSandbox, InvalidOptionError, run } from "../src/index.ts";

describe("sandbox (javascript)", () => {
  it("createSandbox → run → close, with Symbol.asyncDispose", async () => {
    await using sandbox = await createSandbox({ limits: { timeoutMs: 2000 } });
    const r = await sandbox.run({
      language: "javascript",
      code: `console.log("hi"); [1, 2, 3].reduce((a, b) => a + b)`,
    });
    assert.equal(r.ok, true);
    assert.equal(r.ok && r.value, 6);
    assert.equal(r.stdout, "hi\n");
    assert.equal(r.language, "javascript");
    assert.equal(r.stats.engine, "quickjs");
    const ts = await sandbox.run({ language: "typescript", code: `const n: number = 2;\nn ** 10` });
    assert.equal(ts.ok && ts.value, 1024);
  });

  it("the one-shot run() helper", async () => {
    const r = await run({ language: "javascript", code: "'one shot'" });
    assert.equal(r.ok && r.value, "one shot");
  });

  it("guest failures are returned, host misuse throws", async () => {
    const sandbox = await createSandbox();
    const r = await sandbox.run({ language: "javascript", code: "throw new Error('guest')" });
    assert.equal(!r.ok && r.error.kind, "runtime");
    await assert.rejects(
      sandbox.run({ language: "javascript", code: "1", limits: { timeoutMs: -5 } }),
      InvalidOptionError,
    );
    await sandbox.close();
    await assert.rejects(sandbox.run({ language: "javascript", code: "1" }), ClosedError);
  });

  it("per-run limits override the sandbox's", async () => {
    await using sandbox = await createSandbox({ limits: { timeoutMs: 5000 } });
    const r = await sandbox.run({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 50 } });
    assert.equal(!r.ok && r.error.kind, "timeout");
  });

  it("host functions from the options and the request are merged", async () => {
    await using sandbox = await createSandbox({ javascript: { hostFunctions: { a: () => "A" } } });
    const r = await sandbox.run({
      language: "javascript",
      code: "[await a(), await b()]",
      hostFunctions: { b: () => "B" },
    });
    assert.deepEqual(r.ok && r.value, ["A", "B"]);
  });

  it("sessions keep state and close", async () => {
    await using sandbox = await createSandbox();
    await using session = await sandbox.session({ language: "javascript" });
    await session.run({ code: "var total = 10" });
    const r = await session.run({ code: "total += 5; total" });
    assert.equal(r.ok && r.value, 15);
  });

  it("concurrent runs do not see each other", async () => {
    await using sandbox = await createSandbox();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        sandbox.run({
          language: "javascript",
          code: `globalThis.me = ${i}; await new Promise((r) => setTimeout(r, 10)); me`,
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.ok && r.value),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  });

  it("destroy() ends in-flight runs at once", async () => {
    const sandbox = await createSandbox();
    const waiting = sandbox.run({ language: "javascript", code: "await new Promise((r) => setTimeout(r, 5000)); 1" });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await sandbox.destroy();
    const r = await waiting;
    assert.equal(!r.ok && r.error.kind, "crashed");
    assert.match(!r.ok ? r.error.message : "", /the sandbox was destroyed/);
    assert.ok(Date.now() - started < 4000, "did not wait for the guest's timer");
  });
});
