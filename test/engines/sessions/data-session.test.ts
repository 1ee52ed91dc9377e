// JavaScript sessions are data: snapshot → resume, fork, eviction with transparent resume, on the thread
// pool and in-process; hostile snapshots refused with their own reason and nothing left behind.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../src/core/errors.ts";
import { createSandbox } from "../../../src/index.ts";
import { createEngine } from "../../../src/engines/quickjs/index.ts";
import type { InProcessEngine } from "../../../src/engines/quickjs/in-process.ts";
import type { SessionsEngine } from "../../../src/engines/sessions/with-sessions.ts";
import { decodeState, encodeState, maxSessionMemory } from "../../../src/engines/quickjs/state-codec.ts";
import type { SandboxEvent } from "../../../src/core/events.ts";
import { resolveOptions, resolveRequest, type SandboxOptions } from "../../../src/options/index.ts";
import { openSnapshot, sealSnapshot } from "../../../src/engines/sessions/snapshot.ts";

const KEY = "k".repeat(40);
const ISOLATIONS = ["thread", "in-process"] as const;

const STATE = `
  let n = 5;
  globalThis.scale = (a) => a * n;
  class Point { constructor(x, y) { this.x = x; this.y = y } norm() { return Math.hypot(this.x, this.y) } }
  globalThis.p = new Point(3, 4);
  globalThis.m = new Map([["a", 1], ["b", [2, 3]]]);
  let count = 0;
  globalThis.next = () => ++count;
  globalThis.ready = Promise.resolve("settled");
  next();
`;
const CHECK = `[scale(2), p.norm(), p instanceof Point, m.get("b")[1], next(), await ready, new URL("https://a.example/x").pathname]`;
const EXPECTED = [10, 5, true, 3, 2, "settled", "/x"];

/** A sandbox of `isolation` with these session options, whose events go into `events`. */
function watchedSandbox(
  isolation: (typeof ISOLATIONS)[number],
  sessions: NonNullable<SandboxOptions["sessions"]>,
  events: SandboxEvent[],
) {
  return createSandbox({ javascript: { isolation }, sessions, onEvent: (e) => void events.push(e) });
}

/** The `session.evicted` events in `events` (with an error or without, as `failed` says), once `n` came (up to 5 s). */
async function evictions(events: SandboxEvent[], n: number, failed: boolean) {
  const seen = () => events.filter((e) => e.type === "session.evicted" && Boolean(e.error) === failed);
  for (let i = 0; i < 500 && seen().length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return seen();
}

async function engineOf(options: SandboxOptions) {
  const resolved = resolveOptions(options);
  const engine = (await createEngine(resolved)) as SessionsEngine;
  const req = (code: string) => resolveRequest({ language: "javascript", code }, resolved);
  return { engine, req, resolved };
}

describe("JavaScript sessions are data", () => {
  for (const isolation of ISOLATIONS) {
    it(`${isolation}: snapshot → resume gives back the same values, closures, Maps, classes and settled promises`, async () => {
      await using sb = await createSandbox({ javascript: { isolation }, sessions: { key: KEY, idleMs: false } });
      await using s = await sb.session({ language: "javascript" });
      assert.ok((await s.run({ code: STATE })).ok);
      const snap = await s.snapshot();
      await using r = await sb.resume(snap);
      const again = await r.run({ code: CHECK });
      assert.ok(again.ok, JSON.stringify(again));
      assert.deepEqual(again.value, EXPECTED);
      // The original carries on, unchanged by the copy's run.
      const orig = await s.run({ code: "next()" });
      assert.ok(orig.ok && orig.value === 2);
    });

    it(`${isolation}: a TypeScript session resumes as TypeScript`, async () => {
      await using sb = await createSandbox({ javascript: { isolation }, sessions: { idleMs: false } });
      await using s = await sb.session({ language: "typescript" });
      await s.run({ code: "const k: number = 7; globalThis.twice = (v: number): number => v * k * 2;" });
      await using r = await sb.resume(await s.snapshot());
      assert.equal(r.language, "typescript");
      const out = await r.run({ code: "const z: number = twice(1); z" });
      assert.ok(out.ok && out.value === 14, JSON.stringify(out));
    });

    it(`${isolation}: a resumed session sees no other session's state, and a stateless run after it sees none of its`, async () => {
      await using sb = await createSandbox({ javascript: { isolation }, sessions: { idleMs: false } });
      await using other = await sb.session({ language: "javascript" });
      await other.run({ code: "globalThis.otherSecret = 'o'" });
      await using s = await sb.session({ language: "javascript" });
      await s.run({ code: "globalThis.secret = 's'" });
      await using r = await sb.resume(await s.snapshot());
      const seen = await r.run({ code: "[typeof otherSecret, secret]" });
      assert.deepEqual(seen.ok && seen.value, ["undefined", "s"]);
      const stateless = await sb.run({ language: "javascript", code: "[typeof secret, typeof otherSecret]" });
      assert.deepEqual(stateless.ok && stateless.value, ["undefined", "undefined"]);
    });

    it(`${isolation}: two forks diverge without seeing each other's writes`, async () => {
      await using sb = await createSandbox({ javascript: { isolation }, sessions: { idleMs: false } });
      await using s = await sb.session({ language: "javascript" });
      await s.run({ code: "globalThis.shared = { v: 1 }; globalThis.log = [];" });
      await using a = await s.fork();
      await using b = await s.fork();
      await a.run({ code: "shared.v = 'a'; log.push('a'); globalThis.onlyA = true" });
      await b.run({ code: "shared.v = 'b'; log.push('b')" });
      const [ra, rb, rs] = await Promise.all(
        [a, b, s].map((x) => x.run({ code: "[shared.v, log.join(), typeof onlyA]" })),
      );
      assert.deepEqual(ra!.ok && ra!.value, ["a", "a", "boolean"]);
      assert.deepEqual(rb!.ok && rb!.value, ["b", "b", "undefined"]);
      assert.deepEqual(rs!.ok && rs!.value, [1, "", "undefined"]);
    });

    it(`${isolation}: an idle session is evicted and its next run resumes it transparently, with events`, async () => {
      const events: SandboxEvent[] = [];
      await using sb = await createSandbox({
        javascript: { isolation },
        sessions: { idleMs: 30 },
        onEvent: (e) => void events.push(e),
      });
      await using s = await sb.session({ language: "javascript" });
      await s.run({ code: "globalThis.kept = [1, 2, 3]" });
      for (let i = 0; i < 200 && !events.some((e) => e.type === "session.evicted"); i++)
        await new Promise((r) => setTimeout(r, 10));
      const evicted = events.find((e) => e.type === "session.evicted");
      assert.ok(evicted && evicted.type === "session.evicted" && evicted.bytes > 0 && evicted.engine === "quickjs");
      const out = await s.run({ code: "kept.length" });
      assert.ok(out.ok && out.value === 3, JSON.stringify(out));
      const resumed = events.find((e) => e.type === "session.resume");
      assert.ok(resumed && resumed.type === "session.resume" && resumed.bytes === evicted.bytes);
    });
    it(`${isolation}: a session whose snapshot would be over sessions.maxSnapshotBytes stays live, never evicted into bytes no resume takes`, async () => {
      const events: SandboxEvent[] = [];
      await using sb = await watchedSandbox(isolation, { idleMs: 30, maxSnapshotBytes: 256 * 1024 }, events);
      await using s = await sb.session({ language: "javascript" });
      // 512 KiB of random bytes (they do not compress): twice the cap.
      const made = await s.run({
        code: "globalThis.big = Array.from({ length: 8 }, () => crypto.getRandomValues(new Uint8Array(65536))); big.length",
      });
      assert.ok(made.ok && made.value === 8, JSON.stringify(made));
      await assert.rejects(s.snapshot(), (e: unknown) => e instanceof SnapshotUnsupportedError && e.reason === "size");
      const [refused] = await evictions(events, 1, true);
      assert.ok(
        refused?.type === "session.evicted" && /maxSnapshotBytes/.test(refused.error ?? ""),
        JSON.stringify(events),
      );
      const out = await s.run({ code: "big.reduce((n, b) => n + b.length, 0)" });
      assert.ok(out.ok && out.value === 8 * 65536, JSON.stringify(out));
    });

    it(`${isolation}: a session of 100 MB forks, resumes from its snapshot and comes back from eviction`, async () => {
      const events: SandboxEvent[] = [];
      await using sb = await watchedSandbox(isolation, { idleMs: 30 }, events);
      await using s = await sb.session({ language: "javascript" });
      const made = await s.run({
        code: "globalThis.big = new Uint8Array(100_000_000); big[99_999_999] = 7; big.length",
      });
      assert.ok(made.ok, JSON.stringify(made));
      // A fresh module's heap has free space at its top, which malloc fills first: growing by one block
      // of the shortfall left the memory too small, and every copy of a large session failed.
      const look = "[big.length, big[99_999_999]]";
      await using copy = await s.fork();
      const forked = await copy.run({ code: look });
      assert.deepEqual(forked.ok && forked.value, [100_000_000, 7], JSON.stringify(forked));
      await using again = await sb.resume(await s.snapshot());
      const resumed = await again.run({ code: look });
      assert.deepEqual(resumed.ok && resumed.value, [100_000_000, 7], JSON.stringify(resumed));
      // All three sessions go idle: each is evicted into the store, and the next run resumes `s`.
      assert.equal((await evictions(events, 3, false)).length, 3, JSON.stringify(events));
      const back = await s.run({ code: look });
      assert.deepEqual(back.ok && back.value, [100_000_000, 7], JSON.stringify(back));
    });
  }

  it("a snapshot resumes in a second process that has the same sessions.key", async () => {
    await using sb = await createSandbox({ sessions: { key: KEY, idleMs: false } });
    await using s = await sb.session({ language: "javascript" });
    await s.run({ code: STATE });
    const dir = mkdtempSync(join(tmpdir(), "wasmcell-js-snap-"));
    writeFileSync(join(dir, "snap.bin"), await s.snapshot());
    const script = join(dir, "resume.ts");
    writeFileSync(
      script,
      `import { readFileSync } from "node:fs";
import { createSandbox } from ${JSON.stringify(new URL("../../../src/index.ts", import.meta.url).pathname)};
const sb = await createSandbox({ sessions: { key: ${JSON.stringify(KEY)}, idleMs: false } });
const r = await sb.resume(readFileSync(${JSON.stringify(join(dir, "snap.bin"))}));
const out = await r.run({ code: ${JSON.stringify(CHECK)} });
process.stdout.write(JSON.stringify(out.ok ? out.value : out.error));
await sb.close();
`,
    );
    const child = spawnSync("node_modules/.bin/node", [script], { encoding: "utf8", timeout: 120_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), EXPECTED);
  });

  describe("hostile snapshots are refused with their own reason, and nothing is left behind", () => {
    for (const isolation of ISOLATIONS) {
      it(`${isolation}: a flipped byte, a truncated blob, another key, another build digest`, async () => {
        await using sb = await createSandbox({ javascript: { isolation }, sessions: { key: KEY, idleMs: false } });
        await using s = await sb.session({ language: "javascript" });
        await s.run({ code: "globalThis.x = 1" });
        const snap = await s.snapshot();
        const flipped = Uint8Array.from(snap);
        flipped[flipped.length - 100]! ^= 0x20;
        const { header, state } = openSnapshot(new TextEncoder().encode(KEY), snap, 1 << 30);
        const otherBuild = sealSnapshot(new TextEncoder().encode(KEY), { ...header, lock: "0".repeat(64) }, state);
        const other = await createSandbox({ sessions: { key: "o".repeat(40) } });
        const otherKey = await (await other.session({ language: "javascript" })).snapshot();
        await other.close();
        const cases: [Uint8Array, string][] = [
          [flipped, "authentication"],
          [snap.subarray(0, snap.length - 1), "corrupt"],
          [otherKey, "key"],
          [otherBuild, "lock"],
        ];
        for (const [bytes, reason] of cases)
          await assert.rejects(
            sb.resume(bytes),
            (e: unknown) => e instanceof SnapshotRejectedError && e.reason === reason,
          );
        // The sandbox still works and still resumes the good one.
        await using r = await sb.resume(snap);
        assert.ok((await r.run({ code: "x" })).ok);
      });
    }

    it("hostile snapshot: an authenticated blob whose pointers point outside its memory is refused before any engine sees it", async () => {
      const { engine, resolved } = await engineOf({
        javascript: { isolation: "in-process" },
        sessions: { idleMs: false },
      });
      const inner = (engine.inner as InProcessEngine).inner;
      try {
        const s = await engine.openSession();
        const blob = await s.snapshot();
        const { state } = openSnapshot(resolved.sessions.key, blob, 1 << 30);
        const max = maxSessionMemory(resolved.limits.memoryMb);
        const { inventory, pages } = decodeState(state, max);
        const hostile: [string, object][] = [
          ["a context pointer past the end", { ...inventory, ctx: inventory.memoryBytes + 64 }],
          ["an unaligned runtime pointer", { ...inventory, rt: inventory.rt + 3 }],
          ["a memory larger than the session may hold", { ...inventory, memoryBytes: max + 65536 }],
          ["a memory not a whole number of pages", { ...inventory, memoryBytes: inventory.memoryBytes - 4096 }],
          [
            "a host function the install code never makes",
            { ...inventory, hostRefs: [[inventory.nextId - 1, "host.x.y\u0000"], ...inventory.hostRefs.slice(1)] },
          ],
          [
            "an unknown runtime family",
            { ...inventory, runtime: { installed: ["nope"], stubbed: [], internals: 0, makeError: 0 } },
          ],
        ];
        const before = inner.sessionModules.live;
        for (const [what, inv] of hostile) {
          const bytes = encodeState(inv as typeof inventory, pages);
          await assert.rejects(
            engine.resumeSession(bytes, bytes.length),
            (e: unknown) => {
              assert.ok(e instanceof SnapshotRejectedError, `${what}: ${String(e)}`);
              return true;
            },
            what,
          );
        }
        assert.equal(inner.sessionModules.live, before, "no module of a refused resume is left");
        assert.equal(engine.sessions.size, 1);
        await s.close();
        assert.equal(inner.sessionModules.live, 0);
      } finally {
        await engine.close();
      }
    });
  });
});
