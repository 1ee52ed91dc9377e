// Threat: taking the engine down for everyone. A QuickJS module that aborts (quickjs-emscripten#257:
// `Assertion failed: list_empty(&rt->gc_obj_list)` on dispose after OOM), traps, or is unwound by a
// host-stack RangeError is thrown away and replaced by the spare; the run reports the right kind; a
// long series of hostile runs leaves a host that still runs code and has not grown without bound.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

/** Cheap hostile programs (each ends in a few ms) and the kind each must report. */
const HOSTILE: [string, Record<string, number>, string][] = [
  ["let s = 'x'; while (true) s += s + s;", { memoryMb: 1 }, "memory"],
  ["'x'.repeat(2 ** 28)", { memoryMb: 1 }, "memory"],
  ["new Uint8Array(2 ** 31 - 1)", { memoryMb: 1 }, "memory"],
  ["const a = []; while (true) a.push([a]);", { memoryMb: 1 }, "memory"],
  ["function f() { return f() + 1 } f()", { maxStackKb: 64 }, "stack"],
  ["while (true) {}", { timeoutMs: 2 }, "timeout"],
  ["(async () => { while (true) await null })()", { timeoutMs: 2 }, "timeout"],
  ["throw new Error('x')", {}, "runtime"],
];

// In-process, and in one worker thread (one, so the poisoned-module case shares a module as in-process).
for (const isolation of ["in-process", "thread"] as const)
  describe(`quickjs (${isolation})`, () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await createSandbox({ javascript: { isolation, workers: 1 } });
    });
    after(() => sandbox.close());

    it("survives 2,000 hostile runs in a row, reporting each kind, then runs normal code with bounded host memory", async () => {
      const rssBefore = process.memoryUsage().rss;
      const seen: Record<string, number> = {};
      for (let i = 0; i < 2000; i++) {
        // Every 250th run overflows the host stack from C recursion: a poisoned module, replaced.
        const [code, limits, kind] =
          i % 250 === 249 ? ["JSON.parse('['.repeat(1e5))", {}, "stack"] : HOSTILE[i % HOSTILE.length]!;
        const r = await sandbox.run({ language: "javascript", code, limits });
        assert.equal(r.ok, false, code);
        assert.equal(!r.ok && r.error.kind, kind, `${code}: ${JSON.stringify(!r.ok && r.error)}`);
        seen[kind] = (seen[kind] ?? 0) + 1;
      }
      assert.deepEqual(Object.keys(seen).sort(), ["memory", "runtime", "stack", "timeout"]);
      const ok = await sandbox.run({
        language: "javascript",
        code: "console.log('alive'); [1, 2, 3].map((x) => x * 2)",
      });
      assert.equal(ok.ok, true);
      assert.deepEqual(ok.ok && ok.value, [2, 4, 6]);
      assert.equal(ok.stdout, "alive\n");
      const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      assert.ok(grownMb < 300, `host RSS grew by ${grownMb.toFixed(0)} MB over 2,000 hostile runs`);
    });

    it("a run in flight on a module another run poisoned ends as crashed, not hung", async () => {
      const waiting = sandbox.run({
        language: "javascript",
        code: "await new Promise((r) => setTimeout(r, 300)); 'done'",
      });
      await new Promise((r) => setTimeout(r, 20));
      const crasher = await sandbox.run({ language: "javascript", code: "JSON.parse('['.repeat(1e5))" });
      assert.equal(!crasher.ok && crasher.error.kind, "stack");
      const r = await waiting;
      assert.equal(!r.ok && r.error.kind, "crashed");
      assert.match(!r.ok ? r.error.message : "", /replaced while this run was waiting/);
    });

    it("a session whose module crashed reports it and is dead afterwards", async () => {
      const session = await sandbox.session({ language: "javascript" });
      try {
        assert.equal((await session.run({ code: "globalThis.n = 1; n" })).ok, true);
        const crash = await session.run({ code: "JSON.parse('['.repeat(1e5))" });
        assert.equal(!crash.ok && crash.error.kind, "stack");
        const after = await session.run({ code: "n" });
        assert.equal(!after.ok && after.error.kind, "crashed");
        assert.match(!after.ok ? after.error.message : "", /open a new session/);
      } finally {
        await session.close();
      }
      const fresh = await sandbox.run({ language: "javascript", code: "1 + 1" });
      assert.equal(fresh.ok && fresh.value, 2);
    });
  });
