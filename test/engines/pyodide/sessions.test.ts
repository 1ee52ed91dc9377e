// Python sessions as data: snapshot in one process and resume in another, the refusals (each its own
// reason, nothing half-resumed), forks that diverge, eviction and its transparent resume, and the
// isolation a resumed session owes every other session and every stateless run.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../src/core/errors.ts";
import type { SandboxEvent } from "../../../src/core/events.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { sealSnapshot, openSnapshot } from "../../../src/engines/sessions/snapshot.ts";
import { DiskSessionStore } from "../../../src/stores/disk.ts";
import { MemorySessionStore } from "../../../src/stores/memory.ts";
import type { RunResult } from "../../../src/core/types.ts";
import { FULL } from "../../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";
const dir = mkdtempSync(join(tmpdir(), "wasmcell-sessions-"));
const events: SandboxEvent[] = [];
let shared: Sandbox | undefined;
async function sandbox(): Promise<Sandbox> {
  shared ??= await createSandbox({
    seal: FULL,
    python: { pool: 2 },
    sessions: { key: KEY },
    onEvent: (e) => events.push(e),
  });
  return shared;
}
after(async () => {
  await shared?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The first `session.evicted` event in `events`, waited for (up to 5 s). */
async function eviction(events: SandboxEvent[]): Promise<SandboxEvent | undefined> {
  for (let i = 0; i < 100 && !events.some((e) => e.type === "session.evicted"); i++)
    await new Promise((r) => setTimeout(r, 50));
  return events.find((e) => e.type === "session.evicted");
}

function childPids(): string[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
}

/** The child count once it holds still for 300 ms: an earlier test's sidecars may still be exiting. */
async function settledChildCount(): Promise<number> {
  let last = childPids().length;
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const now = childPids().length;
    if (now === last) return now;
    last = now;
  }
  return last;
}

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

/**
 * The snapshot's record as a compromised sidecar could hand it back: inflated, its header and body
 * edited in place (or a new body returned), and sealed again under the key (it is authenticated).
 */
function reforge<H>(key: Uint8Array, snapshot: Uint8Array, edit: (h: H, body: Buffer) => unknown): Uint8Array {
  const { header, state } = openSnapshot(key, snapshot, 1 << 30);
  const raw = zstdDecompressSync(state);
  const length = raw.readUInt32LE(0);
  const h = JSON.parse(raw.subarray(4, 4 + length).toString("utf8")) as H;
  let body: Buffer = Buffer.from(raw.subarray(4 + length));
  const edited: unknown = edit(h, body);
  if (edited instanceof Buffer) body = edited;
  const json = Buffer.from(JSON.stringify(h));
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(json.length);
  return sealSnapshot(key, header, zstdCompressSync(Buffer.concat([prefix, json, body])));
}

const SETUP =
  "import json, re, datetime\n" +
  "x = 1234\n" +
  "pattern = re.compile(r'\\d+')\n" +
  "import os\nos.makedirs('/tmp/d', exist_ok=True)\n" +
  "open('/tmp/d/f.txt', 'w').write('kept')\n" +
  "open('here.txt', 'w').write('workdir')\n" +
  "json.marker = 'module state'\n" +
  "def f(a): return a * 2\n" +
  "None";
const CHECK =
  "import sys\n(x, pattern.findall('a1b22'), open('/tmp/d/f.txt').read(), open('here.txt').read(), " +
  "json.marker, f(21), 'datetime' in sys.modules, datetime.date(2020, 1, 2).isoformat())";
const EXPECTED = [1234, ["1", "22"], "kept", "workdir", "module state", 42, true, "2020-01-02"];

describe("python session snapshots", () => {
  it("a snapshot taken in one process resumes in a second: same values, files and imported modules", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: SETUP }));
    const snap = await s.snapshot();
    // The session carries on after a snapshot.
    assert.deepEqual(value(await s.run({ code: CHECK })), EXPECTED);
    const file = join(dir, "snap.bin");
    writeFileSync(file, snap);
    const index = new URL("../../../src/index.ts", import.meta.url).href;
    const script = `
      import { readFileSync } from "node:fs";
      import { createSandbox } from ${JSON.stringify(index)};
      const sb = await createSandbox({ seal: { seccomp: "kill" }, python: { pool: 1 }, sessions: { key: ${JSON.stringify(KEY)} } });
      const s = await sb.resume(readFileSync(${JSON.stringify(file)}));
      const r = await s.run({ code: ${JSON.stringify(CHECK)} });
      process.stdout.write(JSON.stringify(r.ok ? r.value : r.error));
      await sb.close();`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      env: process.env,
      timeout: 120_000,
    });
    assert.deepEqual(JSON.parse(stdout), EXPECTED);
  });

  it("a flipped byte, a truncated blob, another key, another lock: each refused with its own reason", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const snap = await s.snapshot();
    const refused = async (bytes: Uint8Array) => {
      try {
        await sb.resume(bytes);
      } catch (error) {
        assert.ok(error instanceof SnapshotRejectedError, String(error));
        return error.reason;
      }
      return "resumed";
    };
    const flipped = Uint8Array.from(snap);
    flipped[flipped.length - 100]! ^= 1;
    assert.equal(await refused(flipped), "authentication");
    assert.equal(await refused(snap.subarray(0, snap.length - 1)), "corrupt");
    await using other = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { key: "x".repeat(40) } });
    await using os = await other.session({ language: "python" });
    value(await os.run({ code: "y = 2" }));
    assert.equal(await refused(await os.snapshot()), "key");
    const { header, state } = openSnapshot(new TextEncoder().encode(KEY), snap, 1 << 30);
    const key = new TextEncoder().encode(KEY);
    assert.equal(await refused(sealSnapshot(key, { ...header, lock: "another-lock" }, state)), "lock");
    assert.equal(await refused(sealSnapshot(key, { ...header, engineVersion: "0.0.1" }, state)), "engine");
  });

  it("an authenticated blob whose state does not load is refused and leaves nothing half-resumed", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const key = new TextEncoder().encode(KEY);
    const { header, state } = openSnapshot(key, await s.snapshot(), 1 << 30);
    for (const bad of [new Uint8Array(64), state.subarray(0, state.length >> 1)]) {
      await assert.rejects(sb.resume(sealSnapshot(key, header, bad)), (e: unknown) => {
        assert.ok(e instanceof SnapshotRejectedError);
        assert.equal(e.reason, "corrupt");
        return true;
      });
    }
    // The sidecars that refused retired; the pool serves stateless runs that see nothing.
    assert.equal(value(await sb.run({ language: "python", code: "'x' in globals()" })), false);
    assert.equal(value(await s.run({ code: "x" })), 1);
  });

  it("a record that writes through a link it plants (into /dev) is refused (attack: a crafted record)", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const key = new TextEncoder().encode(KEY);
    // Rewrite the (authenticated) record as a compromised sidecar could: a link /tmp/l -> /dev, then a
    // file under it. Such a record is what a guest that owned its sidecar's JS might hand back.
    const forged = reforge<{ nodes: unknown[] }>(key, await s.snapshot(), (h, body) => {
      h.nodes.push(
        { p: "/tmp/l", k: "l", m: 0o120777, t: 0, l: "/dev" },
        { p: "/tmp/l/x", k: "f", m: 0o100644, t: 0, n: 1 },
      );
      return Buffer.concat([body, Buffer.from("X")]);
    });
    await assert.rejects(sb.resume(forged), (e: unknown) => {
      assert.ok(e instanceof SnapshotRejectedError);
      assert.equal(e.reason, "corrupt");
      assert.match(e.message, /not on the session's file system/);
      return true;
    });
  });

  it("a record whose memory chunks are out of range, out of order or miscounted is refused (attack: a crafted record)", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const key = new TextEncoder().encode(KEY);
    const snap = await s.snapshot();
    type H = { chunks: number; size: number };
    let h: H = { chunks: 0, size: 0 };
    reforge<H>(key, snap, (read) => void (h = read));
    assert.ok(h.chunks >= 2);
    const forge = (edit: (h: H, body: Buffer) => unknown) => reforge<H>(key, snap, edit);
    const cases: [string, Uint8Array, RegExp][] = [
      ["past the memory", forge((_, b) => b.writeUInt32LE(h.size / 256, 4 * (h.chunks - 1))), /a chunk index/],
      ["repeated", forge((_, b) => b.writeUInt32LE(b.readUInt32LE(0), 4)), /out of order/],
      ["one more than the payload", forge((hh) => (hh.chunks += 1)), /payload length/],
      ["more than the memory holds", forge((hh) => (hh.chunks = hh.size / 256 + 1)), /chunk count/],
    ];
    for (const [what, blob, why] of cases) {
      await assert.rejects(sb.resume(blob), (e: unknown) => {
        assert.ok(e instanceof SnapshotRejectedError, what);
        assert.equal(e.reason, "corrupt", what);
        assert.match(e.message, why, what);
        return true;
      });
    }
    // Every refusal retired the sidecar it reached; the sandbox still serves sessions.
    assert.deepEqual(value(await s.run({ code: "x + 1" })), 2);
  });

  it("two forks diverge: neither sees the other's memory, files or module state", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "import json\nx = 0\nopen('/tmp/shared.txt', 'w').write('base')" }));
    await using a = await s.fork();
    await using b = await s.fork();
    value(await a.run({ code: "x = 'a'\njson.owner = 'a'\nopen('/tmp/shared.txt', 'w').write('a')" }));
    value(await b.run({ code: "x = 'b'\njson.owner = 'b'\nopen('/tmp/shared.txt', 'w').write('b')" }));
    const look = "(x, getattr(json, 'owner', None), open('/tmp/shared.txt').read())";
    assert.deepEqual(value(await a.run({ code: look })), ["a", "a", "a"]);
    assert.deepEqual(value(await b.run({ code: look })), ["b", "b", "b"]);
    assert.deepEqual(value(await s.run({ code: look })), [0, null, "base"]);
  });

  it("a sequence the guest seeded carries on across a session's runs, an eviction and a continuing resume", async () => {
    await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { idleMs: false } });
    const seeded = "import random\nrandom.seed(1)\n[random.random() for _ in range(4)]";
    const expected = value(await sb.run({ language: "python", code: seeded }));
    await using a = await sb.session({ language: "python" });
    value(await a.run({ code: "import random\nrandom.seed(1)\ndraws = [random.random()]" }));
    value(await a.run({ code: "draws.append(random.random())" }));
    // b's first run needs the one sidecar: a is evicted, and its next run resumes it from the store.
    await using b = await sb.session({ language: "python" });
    value(await b.run({ code: "1" }));
    value(await a.run({ code: "draws.append(random.random())" }));
    // A resume that is the same session carrying on (the MCP server's and the CLI's) continues it too.
    await using c = await sb.resume(await a.snapshot(), { reseed: false });
    assert.deepEqual(value(await c.run({ code: "draws + [random.random()]" })), expected);
    await assert.rejects(sb.resume(await a.snapshot(), { reseed: "no" as unknown as boolean }), /resume\.reseed/);
  });

  it("a session whose code rewrote random.seed to spin cannot hang a fork (attack: the reseed runs its Python)", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    // Random.seed calls super(), so its code has one free variable (__class__): the spinner has it too.
    const spin = "class K:\n    def seed(self, a=None, version=2):\n        __class__\n        while True: pass\n";
    value(
      await s.run({
        code: `import random\nrandom.seed = None\n${spin}random.Random.seed.__code__ = K.seed.__code__\nx = 1`,
      }),
    );
    await assert.rejects(s.fork(), (error: unknown) => {
      assert.ok(error instanceof SnapshotRejectedError, String(error));
      assert.match(error.message, /random generator could not be reseeded: it did not return within 1000 ms/);
      return true;
    });
    // The session itself is untouched, and the sandbox still forks other sessions.
    assert.equal(value(await s.run({ code: "x + 1" })), 2);
    await using other = await sb.session({ language: "python" });
    value(await other.run({ code: "y = 3" }));
    await using copy = await other.fork();
    assert.equal(value(await copy.run({ code: "y" })), 3);
  });

  it("a session whose code made random.seed print forks cleanly: the print goes nowhere (attack: output outside a run)", async () => {
    // One sidecar that has already served a run, so its output capture holds that run's id and room.
    await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { idleMs: false } });
    assert.equal(value(await sb.run({ language: "python", code: "print('before')\n1" })), 1);
    await using s = await sb.session({ language: "python" });
    const loud =
      "class K:\n    def seed(self, a=None, version=2):\n        __class__\n        print('from the reseed')\n";
    value(await s.run({ code: `import random\n${loud}random.Random.seed.__code__ = K.seed.__code__\nx = 1` }));
    // With one sidecar, the fork evicts `s` and loads the copy into the sidecar that ran `print('before')`.
    await using copy = await s.fork();
    const r = await copy.run({ code: "x" });
    assert.ok(r.ok && r.value === 1 && r.stdout === "", JSON.stringify(r));
  });

  it("an idle session is evicted into the store and its next run resumes it transparently", async () => {
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { idleMs: 50 },
      onEvent: (e) => events.push(e),
    });
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "import re\nx = 7\nopen('/tmp/e.txt', 'w').write('e')" }));
    const evicted = await eviction(events);
    assert.ok(evicted && evicted.type === "session.evicted" && evicted.bytes > 0 && !evicted.error);
    // The one sidecar is pristine again: a stateless run sees nothing of the session.
    assert.deepEqual(
      value(await sb.run({ language: "python", code: "import os\n('x' in globals(), os.path.exists('/tmp/e.txt'))" })),
      [false, false],
    );
    assert.deepEqual(value(await s.run({ code: "(x, re.sub('e', 'E', open('/tmp/e.txt').read()))" })), [7, "E"]);
    assert.ok(events.some((e) => e.type === "session.resume"));
  });

  it("an evicted session whose store entry is gone answers SessionLostError, in the one wording, every run", async () => {
    const store = new MemorySessionStore();
    const seen: SandboxEvent[] = [];
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { idleMs: 50, store },
      onEvent: (e) => seen.push(e),
    });
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const evicted = await eviction(seen);
    assert.ok(evicted && evicted.type === "session.evicted" && !evicted.error);
    await store.delete(evicted.session);
    for (let i = 0; i < 2; i++) {
      const r = await s.run({ code: "x" });
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.error.kind, "crashed");
      assert.equal(r.error.name, "SessionLostError");
      assert.match(r.error.message, /^this session was lost \(.*no longer in the session store\); its state is gone/);
    }
  });

  it("an evicted session waits in a DiskSessionStore file, resumes from it, and closing removes it", async () => {
    const storeDir = join(dir, "store");
    const store = new DiskSessionStore({ dir: storeDir });
    await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { idleMs: false, store } });
    await using a = await sb.session({ language: "python" });
    await using b = await sb.session({ language: "python" });
    value(await a.run({ code: "who = 'a'" }));
    // b's first run needs the one sidecar: a is evicted into the store.
    value(await b.run({ code: "who = 'b'" }));
    assert.equal(readdirSync(storeDir).length, 1);
    assert.equal(value(await a.run({ code: "who" })), "a");
    assert.equal(value(await b.run({ code: "who" })), "b");
    await a.close();
    await b.close();
    assert.deepEqual(readdirSync(storeDir), []);
    await store.close();
  });

  it("with one sidecar, a stateless run takes an idle session's sidecar (the session is evicted, not waited on)", async () => {
    await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { idleMs: false } });
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 'held'" }));
    assert.equal(value(await sb.run({ language: "python", code: "'x' in globals()" })), false);
    assert.equal(value(await s.run({ code: "x" })), "held");
  });

  it("a session whose snapshot would be over sessions.maxSnapshotBytes is kept, never evicted into bytes no resume takes", async () => {
    const seen: SandboxEvent[] = [];
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { idleMs: false, maxSnapshotBytes: 1 << 20 },
      onEvent: (e) => seen.push(e),
    });
    const a = await sb.session({ language: "python" });
    // Random bytes do not compress: the session's state is twice the cap.
    value(await a.run({ code: "import os\nbig = os.urandom(2_000_000)\nlen(big)" }));
    await assert.rejects(a.snapshot(), (e: unknown) => {
      assert.ok(e instanceof SnapshotUnsupportedError && e.reason === "size", String(e));
      assert.match(e.message, /over sessions\.maxSnapshotBytes \(1048576\)/);
      return true;
    });
    // A stateless run needs the one sidecar: the session cannot be evicted, so it keeps its sidecar
    // beside the pool (python.maxPinned) and the run gets a new one; the session keeps its state (it
    // used to be stored over the cap, then refused by its own resume: lost).
    assert.equal(value(await sb.run({ language: "python", code: "1" })), 1);
    const refused = seen.find((e) => e.type === "session.evicted");
    assert.ok(
      refused && refused.type === "session.evicted" && /maxSnapshotBytes/.test(refused.error ?? ""),
      JSON.stringify(refused),
    );
    assert.equal(value(await a.run({ code: "len(big)" })), 2_000_000);
    await a.close();
    assert.equal(value(await sb.run({ language: "python", code: "'free'" })), "free");
  });

  it("a session that grew its memory by 100 MB forks, resumes and comes back from eviction", async () => {
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { idleMs: false, key: KEY },
      limits: { memoryMb: 512 },
    });
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "big = bytearray(100_000_000)\nbig[-1] = 7\nlen(big)" }));
    // Each copy needs a sidecar grown past the checkpoint's memory (malloc would first fill the free
    // space at the heap's top, and one block of the shortfall grew it too little: every copy failed).
    await using copy = await s.fork();
    assert.deepEqual(value(await copy.run({ code: "(len(big), big[-1])" })), [100_000_000, 7]);
    await using again = await sb.resume(await s.snapshot());
    assert.deepEqual(value(await again.run({ code: "(len(big), big[-1])" })), [100_000_000, 7]);
    // With one sidecar, every run above evicted another session into the store and resumed it.
    assert.deepEqual(value(await s.run({ code: "(len(big), big[-1])" })), [100_000_000, 7]);
    // A sandbox whose runs may not have that much memory (limits.memoryMb 64) refuses it as too large,
    // before its sidecar grows (sidecar/record.ts, applyState).
    await using small = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { key: KEY },
      limits: { memoryMb: 64 },
    });
    await assert.rejects(
      small.resume(await s.snapshot()),
      (e: unknown) =>
        e instanceof SnapshotRejectedError && e.reason === "size" && /over limits\.memoryMb/.test(e.message),
    );
  });

  it("a session that cannot be evicted keeps its sidecar beside the pool while a run takes a new one", async () => {
    const seen: SandboxEvent[] = [];
    // This sandbox's sidecars are the children that were not there before it: a count of every child
    // also counted an earlier sandbox's sidecar still exiting, or this pool's first one not yet started
    // (4 against 5 under load), while what is proven is this sandbox's own count.
    await settledChildCount();
    const others = new Set(childPids());
    const ours = () => childPids().filter((pid) => !others.has(pid)).length;
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1 },
      sessions: { idleMs: false },
      onEvent: (e) => seen.push(e),
    });
    // The pool's one sidecar, up (a run needs it), and nothing else of this sandbox.
    assert.equal(value(await sb.run({ language: "python", code: "'warm'" })), "warm");
    await settledChildCount();
    assert.equal(ours(), 1, "the pool's sidecar");
    const s = await sb.session({ language: "python" });
    // An open file cannot leave its interpreter: the session keeps its sidecar between runs.
    value(await s.run({ code: "f = open('held.txt', 'w')" }));
    assert.equal(value(await sb.run({ language: "python", code: "'served'" })), "served");
    assert.equal(ours(), 2, "the pool's new sidecar and the session's, beside it");
    assert.equal(value(await s.run({ code: "f.close()\nf.closed" })), true, "the session was left as it was");
    // It can move now: once idle it gives up the sidecar beside the pool (its state to the store), with
    // no idle timer and no run waiting.
    const moved = () => seen.find((e) => e.type === "session.evicted" && e.bytes > 0);
    for (let i = 0; i < 100 && !moved(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(moved(), JSON.stringify(seen));
    for (let i = 0; i < 100 && ours() > 1; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(ours(), 1, "the sidecar beside the pool is gone");
    assert.equal(value(await s.run({ code: "f.closed" })), true);
    await s.close();
    assert.equal(value(await sb.run({ language: "python", code: "'free'" })), "free");
  });
});

describe("python sessions when the sandbox is destroyed", () => {
  it("destroy() kills a session's sidecar mid-run instead of waiting for the run", async () => {
    const sb = await createSandbox({ seal: FULL, python: { pool: 1 }, limits: { timeoutMs: 60_000 } });
    const s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 1" }));
    const running = s.run({ code: "import time\ntime.sleep(30)" });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await sb.destroy();
    const r = await running;
    assert.equal(r.ok, false);
    // Not a timing bound on the engine: the guest sleeps 30 s, and destroy must not be waiting on it.
    assert.ok(Date.now() - started < 20_000, `destroy took ${Date.now() - started} ms`);
  });

  it("close() right after a session's close waits for that sidecar's reset: no process is left", async () => {
    const before = childPids();
    const sb = await createSandbox({ seal: FULL, python: { pool: 1 } });
    const s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = [0] * 100000" }));
    // The session's close hands the sidecar to its reset without waiting; the sandbox's must wait.
    await s.close();
    await sb.close();
    const left = childPids().filter((p) => !before.includes(p));
    assert.deepEqual(left, [], `processes left: ${left.join(" ")}`);
  });
});

describe("resumed-session isolation (attack: reach another session's or a later run's state)", () => {
  it("a resumed session sees no other session's state; a stateless run after a resume sees none of it", async () => {
    const sb = await sandbox();
    // The marker module is one a pristine interpreter has not imported.
    assert.equal(value(await sb.run({ language: "python", code: "import sys\n'colorsys' in sys.modules" })), false);
    await using victim = await sb.session({ language: "python" });
    value(
      await victim.run({
        code: "import colorsys\nsecret = 'victim-secret'\nopen('/tmp/victim.txt', 'w').write('victim-secret')",
      }),
    );
    await using donor = await sb.session({ language: "python" });
    value(await donor.run({ code: "mine = 1" }));
    await using resumed = await sb.resume(await donor.snapshot());
    // Three sessions on two sidecars: one of them was evicted and its sidecar reset for another.
    const probe =
      "import os, sys\n(('secret' in globals()), os.path.exists('/tmp/victim.txt'), 'colorsys' in sys.modules)";
    assert.deepEqual(value(await resumed.run({ code: probe })), [false, false, false]);
    // Stateless runs after the resume, on every pool sidecar: nothing of either session.
    for (let i = 0; i < 3; i++) {
      const r = await sb.run({
        language: "python",
        code: "import os\n(('mine' in globals()), os.path.exists('/tmp/victim.txt'))",
      });
      assert.deepEqual(value(r), [false, false]);
    }
  });

  it("fork/run/close cycles leave no sidecar, store entry or process behind", async () => {
    const sb = await sandbox();
    await using s = await sb.session({ language: "python" });
    value(await s.run({ code: "x = 0" }));
    for (let i = 0; i < 5; i++) {
      const f = await s.fork();
      assert.equal(value(await f.run({ code: `x = ${i}\nx` })), i);
      await f.close();
    }
    assert.equal(value(await s.run({ code: "x" })), 0);
    const children = childPids();
    // The pool's sidecars (2) and nothing else: every fork's sidecar went back to the pool.
    assert.ok(children.length <= 2, `child processes: ${children.join(" ")}`);
  });
});
