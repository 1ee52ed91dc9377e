// The two stress cases of JavaScript sessions as data, apart from data-session.test.ts so that
// `npm run test:fast` keeps the unit-level cases (fork divergence, hostile snapshots, over-cap
// eviction) and leaves these out: 1,000 fork/run/close cycles on each isolation, and 1,000 sessions
// evicted and resumed (about five minutes together on a 2-core machine).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSandbox } from "../../../src/index.ts";
import type { InProcessEngine } from "../../../src/engines/quickjs/in-process.ts";
import { createEngine } from "../../../src/engines/quickjs/index.ts";
import type { SessionsEngine } from "../../../src/engines/sessions/with-sessions.ts";
import { resolveOptions, resolveRequest, type SandboxOptions } from "../../../src/options/index.ts";

async function engineOf(options: SandboxOptions) {
  const resolved = resolveOptions(options);
  const engine = (await createEngine(resolved)) as SessionsEngine;
  const req = (code: string) => resolveRequest({ language: "javascript", code }, resolved);
  return { engine, req };
}

describe("JavaScript sessions are data, at scale", () => {
  it("1,000 fork/run/close cycles leave no session, module or thread behind", async () => {
    for (const [isolation, cycles] of [
      ["in-process", 1000],
      ["thread", 1000],
    ] as const) {
      const { engine, req } = await engineOf({ javascript: { isolation, workers: 1 }, sessions: { idleMs: false } });
      try {
        const base = await engine.openSession();
        await base.run(req("globalThis.v = 1"));
        const threads = isolation === "thread" ? (engine.inner as unknown as { threads: number }).threads : 0;
        for (let i = 0; i < cycles; i++) {
          const f = await base.fork();
          const r = await f.run(req("v += 1; v"));
          assert.ok(r.ok && r.value === 2, JSON.stringify(r));
          await f.close();
        }
        assert.equal(engine.sessions.size, 1, `${isolation}: only the base session is open`);
        if (isolation === "in-process") assert.equal((engine.inner as InProcessEngine).inner.sessionModules.live, 1);
        else assert.equal((engine.inner as unknown as { threads: number }).threads, threads, "no thread was added");
        await base.close();
        assert.equal(engine.sessions.size, 0);
      } finally {
        await engine.close();
      }
    }
  });

  it("density: 1,000 JavaScript sessions each answer x after every one was evicted, RSS under 2 GiB", async () => {
    const evicted = new Set<string>();
    await using sb = await createSandbox({
      sessions: { idleMs: 20 },
      onEvent: (e) => {
        if (e.type === "session.evicted" && !e.error) evicted.add(e.session);
      },
    });
    const sessions = [];
    let peak = 0;
    for (let id = 0; id < 1000; id++) {
      const s = await sb.session({ language: "javascript" });
      assert.ok((await s.run({ code: `globalThis.x = ${id}` })).ok);
      sessions.push(s);
      if (id % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    for (let i = 0; i < 1000 && evicted.size < 1000; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(evicted.size, 1000, "every session was evicted at least once");
    for (let id = 0; id < 1000; id++) {
      const out = await sessions[id]!.run({ code: "x" });
      assert.ok(out.ok && out.value === id, `session ${id}: ${JSON.stringify(out)}`);
      if (id % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.ok(peak < 2 * 1024 ** 3, `RSS peaked at ${Math.round(peak / 2 ** 20)} MiB`);
    await Promise.all(sessions.map((s) => s.close()));
  });
});
