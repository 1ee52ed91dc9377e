// Native sessions: a warm parent's child kept alive between runs (state persists like a kernel), on
// the shared session life: bounded in number, closed with the session, snapshot/fork unsupported.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { EngineStartError, SnapshotUnsupportedError } from "../../../src/core/errors.ts";

let sandbox: Sandbox;

describe("native sessions", () => {
  before(async () => {
    sandbox = await createSandbox({ python: { engine: "native", pool: 1, maxSessions: 1 } });
  });
  after(() => sandbox.close());

  it("keeps a DataFrame, imports and files between runs; snapshot and fork say why not; close ends it", async () => {
    const session = await sandbox.session({ language: "python", engine: "native" });
    const first = await session.run({
      code: "import pandas as pd\ndf = pd.read_csv('t.csv')\nopen('note.txt', 'w').write('kept')\nlen(df)",
      files: { "t.csv": "a,b\n1,2\n3,4\n5,6\n" },
    });
    assert.equal(first.ok && first.value, 3, JSON.stringify(first));
    assert.deepEqual(
      first.files.map((f) => f.path),
      ["note.txt"],
    );
    const second = await session.run({ code: "print('again')\n[len(df), int(df.b.sum()), open('note.txt').read()]" });
    assert.deepEqual(second.ok && second.value, [3, 12, "kept"], JSON.stringify(second));
    assert.equal(second.stdout, "again\n");
    assert.deepEqual(second.files, [], "a turn returns only what it wrote");
    const failed = await session.run({ code: "1/0" });
    assert.equal(!failed.ok && failed.error.kind, "runtime");
    const third = await session.run({ code: "len(df)" });
    assert.equal(third.ok && third.value, 3, "a runtime error leaves the state as it was");
    await assert.rejects(session.snapshot(), SnapshotUnsupportedError);
    await assert.rejects(session.fork(), SnapshotUnsupportedError);
    // python.maxSessions 1: a second at once is refused.
    await assert.rejects(sandbox.session({ language: "python", engine: "native" }), EngineStartError);
    await session.close();
    // Stateless runs are served as before, and nothing of the session is in them.
    const r = await sandbox.run({ language: "python", engine: "native", code: "'df' in globals()" });
    assert.equal(r.ok && r.value, false);
    const again = await sandbox.session({ language: "python", engine: "native" });
    assert.equal((await again.run({ code: "'df' in globals()" })).ok, true);
    await again.close();
  });

  it("a Python loop past its deadline is a timeout that keeps the state; code stuck in C ends the session", async () => {
    const session = await sandbox.session({ language: "python", engine: "native" });
    assert.equal((await session.run({ code: "x = 1" })).ok, true);
    const loop = await session.run({ code: "import time\ntime.sleep(30)", limits: { timeoutMs: 800 } });
    assert.equal(!loop.ok && loop.error.kind, "timeout");
    assert.equal((await session.run({ code: "x" })).ok, true, "the driver's alarm interrupted it: the state is kept");
    // With the alarm blocked nothing inside can interrupt it: the host kills the child at the deadline.
    const stuck = await session.run({
      code: "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\ntime.sleep(30)",
      limits: { timeoutMs: 800 },
    });
    assert.equal(!stuck.ok && stuck.error.kind, "timeout");
    const next = await session.run({ code: "x" });
    assert.equal(!next.ok && next.error.kind, "crashed", JSON.stringify(next));
    assert.match(!next.ok ? next.error.message : "", /process ended/);
    await session.close();
  });

  it("each turn holds to its own memoryMb; a cap below what the session holds refuses the turn, state kept", async () => {
    const session = await sandbox.session({ language: "python", engine: "native" });
    // 40 MB held in a global, touched so it is resident.
    const held = await session.run({
      code: "import numpy as np\nkeep = np.ones(40 * 1024 * 1024 // 8)\nint(keep.sum())",
    });
    assert.equal(held.ok && held.value, (40 * 1024 * 1024) / 8, JSON.stringify(held));
    // A turn capped below that is refused before it starts; the session is as it was.
    const below = await session.run({ code: "1", limits: { memoryMb: 16 } });
    assert.equal(!below.ok && below.error.kind, "memory", JSON.stringify(below));
    assert.match(!below.ok ? below.error.message : "", /already holds more than this run's 16 MB/);
    assert.equal((await session.run({ code: "int(keep.sum())" })).ok, true);
    // A turn capped at 64 MB that grows past it is killed at its own cap, not the first turn's.
    const grow = await session.run({
      code: "more = np.ones(60 * 1024 * 1024 // 8)\nint(more.sum())",
      limits: { memoryMb: 64 },
    });
    assert.equal(!grow.ok && grow.error.kind, "memory", JSON.stringify(!grow.ok && grow.error));
    await session.close();
  });
});
