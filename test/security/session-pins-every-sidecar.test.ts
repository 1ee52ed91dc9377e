// Threat: one tenant's guest code denies every other tenant's Python. A Pyodide session whose state
// cannot leave its interpreter (it holds an open file, its snapshot would be over
// sessions.maxSnapshotBytes, it runs on a cold-started sidecar) cannot be evicted, so it keeps its pool
// sidecar between runs; with every pool sidecar kept that way, another tenant's `sandbox.run()` is
// refused or waits on that guest — with pool 1, one session would do it; over MCP with pool 2, two clients.
// The floor: `run()` never rejects for anything a guest did, and stateless runs and other sessions are
// served. Such a session's sidecar leaves the pool (the pool starts a replacement), up to
// `python.maxPinned` sidecars beyond the pool; past that, the least recently used such session is
// ended and told so on its next run, and nobody else is.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { serveHttp } from "../../src/adapters/mcp/index.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import { createSandbox, type SandboxOptions, type Session } from "../../src/index.ts";
import { MemorySessionStore } from "../../src/stores/memory.ts";
import type { RunResult } from "../../src/core/types.ts";
import { connectClient, resultText } from "../helpers/mcp-http.ts";
import { FULL } from "../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

/** The sidecars (and any other child processes) this process has now. */
function children(): number {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)
    .length;
}

/** Waits (up to 20 s) for at most `n` child processes: a killed sidecar takes a moment to be reaped. */
async function atMostChildren(n: number): Promise<number> {
  let now = children();
  for (let i = 0; i < 200 && now > n; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = children();
  }
  return now;
}

// Each way a session's state cannot move, with the sandbox options that make it so and the check that
// the session still has its state afterwards.
const UNMOVABLE: { what: string; options: SandboxOptions; pin: string; check: string; expect: unknown }[] = [
  {
    what: "a session holding an open file",
    options: {},
    pin: "f = open('held.txt', 'w')\nf.write('kept')",
    check: "f.closed",
    expect: false,
  },
  {
    what: "a session whose snapshot would be over sessions.maxSnapshotBytes",
    options: { sessions: { idleMs: false, maxSnapshotBytes: 1 << 20 } },
    // Random bytes do not compress: the state is twice the cap.
    pin: "import os\nbig = os.urandom(2_000_000)",
    check: "len(big)",
    expect: 2_000_000,
  },
  {
    what: "a session on a cold-started sidecar",
    options: { python: { pool: 1, snapshot: false } },
    pin: "x = 41",
    check: "x + 1",
    expect: 42,
  },
];

describe("a session that cannot move never denies another tenant's Python (pool 1)", () => {
  for (const u of UNMOVABLE) {
    it(
      `${u.what}: another tenant's run and another session's runs are served; it keeps its state`,
      { timeout: 180_000 },
      async () => {
        await using sb = await createSandbox({
          seal: FULL,
          sessions: { idleMs: false, key: KEY },
          ...u.options,
          python: { pool: 1, ...u.options.python },
        });
        await using held = await sb.session({ language: "python" });
        value(await held.run({ code: u.pin }));
        // Another tenant, stateless: served.
        assert.equal(value(await sb.run({ language: "python", code: "6 * 7" })), 42);
        // Another tenant's session: served, and keeps its own state.
        await using other = await sb.session({ language: "python" });
        value(await other.run({ code: "y = 'other'" }));
        assert.equal(value(await sb.run({ language: "python", code: "'y' in globals()" })), false);
        assert.equal(value(await other.run({ code: "y" })), "other");
        // Within python.maxPinned (2 by default) the session that could not move keeps its state.
        assert.deepEqual(value(await held.run({ code: u.check })), u.expect);
      },
    );
  }

  it(
    "past python.maxPinned the least recently used session that cannot move is ended, told why, and nobody else",
    { timeout: 120_000 },
    async () => {
      const events: SandboxEvent[] = [];
      await using sb = await createSandbox({
        seal: FULL,
        python: { pool: 1, maxPinned: 1 },
        sessions: { idleMs: false },
        onEvent: (e) => events.push(e),
      });
      await using a = await sb.session({ language: "python" });
      await using b = await sb.session({ language: "python" });
      value(await a.run({ code: "f = open('a.txt', 'w')" }));
      // a's sidecar leaves the pool (a keeps it), b gets the pool's new one.
      value(await b.run({ code: "g = open('b.txt', 'w')" }));
      // b cannot move either and the one sidecar beyond the pool is a's: a, used least recently, ends.
      assert.equal(value(await sb.run({ language: "python", code: "'served'" })), "served");
      const lost = await a.run({ code: "f.closed" });
      assert.equal(lost.ok, false);
      assert.ok(
        !lost.ok && lost.error.kind === "crashed" && lost.error.name === "SessionLostError",
        JSON.stringify(lost),
      );
      assert.match(!lost.ok ? lost.error.message : "", /python\.maxPinned/);
      assert.equal(value(await b.run({ code: "g.closed" })), false, "b keeps its state");
      const ended = events.filter((e) => e.type === "session.ended");
      assert.equal(ended.length, 1, JSON.stringify(ended));
      assert.match(JSON.stringify(ended[0]), /open files/);
    },
  );

  it(
    "any number of sessions that cannot move: every run is served, with at most pool + maxPinned sidecars",
    { timeout: 240_000 },
    async () => {
      const before = children();
      await using sb = await createSandbox({
        seal: FULL,
        python: { pool: 1, maxPinned: 2 },
        sessions: { idleMs: false },
      });
      const sessions: Session[] = [];
      for (let i = 0; i < 5; i++) {
        const s = await sb.session({ language: "python" });
        sessions.push(s);
        value(await s.run({ code: `f = open('f${i}.txt', 'w')` }));
        assert.equal(value(await sb.run({ language: "python", code: `${i} + 1` })), i + 1);
        const now = await atMostChildren(before + 3);
        assert.ok(now <= before + 3, `${now - before} sidecars for pool 1 + maxPinned 2`);
      }
      // Every session either kept its file or was told it is gone: none is silently fresh.
      for (const s of sessions) {
        const r = await s.run({ code: "f.closed" });
        if (r.ok) assert.equal(r.value, false);
        else assert.equal(r.error.name, "SessionLostError", JSON.stringify(r.error));
        await s.close();
      }
    },
  );
});

describe("over MCP (HTTP, pool 2), clients whose sessions cannot move never deny another client's Python", () => {
  for (const stored of [false, true]) {
    it(stored ? "sessions in a session store" : "sessions in the server process", { timeout: 240_000 }, async () => {
      await using sandbox = await createSandbox({
        seal: FULL,
        python: { pool: 2 },
        sessions: { key: KEY },
        limits: { timeoutMs: 20_000 },
      });
      await using server = await serveHttp({
        sandbox,
        session: true,
        ...(stored ? { sessionStore: new MemorySessionStore() } : {}),
      });
      const call = (c: Awaited<ReturnType<typeof connectClient>>, code: string) =>
        c.callTool({ name: "run_code", arguments: { language: "python", code } });
      const pinning = [await connectClient(server.url, "a"), await connectClient(server.url, "b")];
      const other = await connectClient(server.url, "c");
      try {
        for (const c of pinning) {
          const r = await call(c, "f = open('held.txt', 'w')");
          assert.ok(!r.isError, resultText(r));
        }
        const r = await call(other, "6 * 7");
        assert.ok(!r.isError, resultText(r));
        assert.match(resultText(r), /42/);
        // The pinning clients still have their files (python.maxPinned is 2 by default).
        for (const c of pinning) assert.match(resultText(await call(c, "f.closed")), /value: false/);
      } finally {
        await Promise.allSettled([...pinning, other].map((c) => c.close()));
      }
    });
  }
});
