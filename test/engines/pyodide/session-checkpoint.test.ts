// A Python session record is relative to the engine checkpoint of the sidecar that took it, and a
// cold-started sidecar's checkpoint is its own (its hash seed: about half the memory differs between
// two cold starts), while every sidecar started from one engine snapshot file shares that file's.
// The threat: a record stored from a base no other sidecar could resume (found as the docs' restart
// example failing on Node 22/24, where the first server's sidecars started cold while the snapshot
// was being built), refused later under a misleading reason. Here: no record is ever taken on a cold
// sidecar; a record from one snapshot file is refused by a sandbox on another (or on none) as
// `checkpoint` before any sidecar sees it; and a process whose snapshot was built mid-life serves its
// later sessions from the built file, so their records resume in a process started from it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../../src/core/errors.ts";
import { createSandbox } from "../../../src/index.ts";
import { FULL } from "../../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";
const dir = mkdtempSync(join(tmpdir(), "wasmcell-checkpoint-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const index = new URL("../../../src/index.ts", import.meta.url).href;
const errors = new URL("../../../src/core/errors.ts", import.meta.url).href;

/** Runs a module script in a child process with its own cache directory; its stdout, parsed. */
async function child(script: string, cache: string): Promise<unknown> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, WASMCELL_CACHE_DIR: cache },
    timeout: 240_000,
  });
  return JSON.parse(stdout);
}

describe("python session records and the engine checkpoint", () => {
  it("a session on a cold-started sidecar is never snapshotted, forked or evicted into a record", async () => {
    const events: string[] = [];
    await using sb = await createSandbox({
      seal: FULL,
      python: { pool: 1, snapshot: false },
      sessions: { key: KEY },
      onEvent: (e) => {
        if (e.type === "session.evicted") events.push(String(e.error));
      },
    });
    await using s = await sb.session({ language: "python" });
    assert.equal((await s.run({ code: "x = 41\nx" })).ok, true);
    const refusedAs = (error: unknown) => {
      assert.ok(error instanceof SnapshotUnsupportedError, String(error));
      assert.equal(error.reason, "checkpoint");
      assert.match(error.message, /without the engine snapshot/);
      return true;
    };
    await assert.rejects(s.snapshot(), refusedAs);
    await assert.rejects(s.fork(), refusedAs);
    // A stateless run needs the one sidecar: the session cannot move, so it keeps it (said) beside the
    // pool (python.maxPinned) and the run gets a new one — never a record the next run could not load.
    assert.equal((await sb.run({ language: "python", code: "1" })).ok, true);
    assert.match(events[0] ?? "", /without the engine snapshot/);
    const r = await s.run({ code: "x + 1" });
    assert.deepEqual(r.ok && r.value, 42);
    await s.close();
    assert.equal((await sb.run({ language: "python", code: "1" })).ok, true);
  });

  it("a record from the engine snapshot is refused as `checkpoint` by a sandbox without it, untouched", async () => {
    await using warm = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { key: KEY } });
    await using s = await warm.session({ language: "python" });
    assert.equal((await s.run({ code: "x = 7" })).ok, true);
    const blob = await s.snapshot();
    await using cold = await createSandbox({
      seal: FULL,
      python: { pool: 1, snapshot: false },
      sessions: { key: KEY },
    });
    await assert.rejects(cold.resume(blob), (error: unknown) => {
      assert.ok(error instanceof SnapshotRejectedError, String(error));
      assert.equal(error.reason, "checkpoint");
      assert.match(error.message, /same snapshot file/);
      return true;
    });
    // Nothing of it reached the cold sandbox's sidecar: it serves the next run as before.
    const r = await cold.run({ language: "python", code: "'x' in globals()" });
    assert.deepEqual(r.ok && r.value, false);
  });

  it("a session that is the engine's first Python use, with no snapshot cached, starts from the built file", async () => {
    // No prewarm: nothing has started when the session asks for its sidecar, so it is the session that
    // sets the build going (through a cold pool sidecar) and waits for it.
    const script = `
      import { createSandbox } from ${JSON.stringify(index)};
      const sb = await createSandbox({ seal: { seccomp: "kill" }, python: { prewarm: false, packages: false },
        sessions: { key: ${JSON.stringify(KEY)} } });
      const s = await sb.session({ language: "python" });
      const ran = await s.run({ code: "x = 1" });
      const blob = await s.snapshot();
      await sb.close();
      process.stdout.write(JSON.stringify({ ran: ran.ok, snapshot: blob.length > 0 }));`;
    assert.deepEqual(await child(script, join(dir, "lazy-cache")), { ran: true, snapshot: true });
  });

  it("a snapshot built mid-process: sessions start from the built file, and resume where it is used only", async () => {
    const cache = join(dir, "cache");
    const blobFile = join(dir, "session.bin");
    // A cache without the snapshot: the sidecars start cold and the snapshot is built behind them. A
    // session opened while the build runs waits for it and starts from the built file (a cold sidecar
    // it would get is replaced), so even the early one can be snapshotted; stateless runs do not wait.
    const first = `
      import { writeFileSync } from "node:fs";
      import { createSandbox } from ${JSON.stringify(index)};
      import { SnapshotUnsupportedError } from ${JSON.stringify(errors)};
      let built;
      const done = new Promise((r) => (built = r));
      const sb = await createSandbox({ seal: { seccomp: "kill" }, python: { pool: 2, packages: false },
        sessions: { key: ${JSON.stringify(KEY)} }, onEvent: (e) => e.type === "engine.built" && built(e) });
      const early = await sb.session({ language: "python" });
      await early.run({ code: "x = 1" });
      let earlyRefused;
      try { await early.snapshot(); earlyRefused = "taken"; }
      catch (e) { earlyRefused = e instanceof SnapshotUnsupportedError ? e.reason : String(e); }
      const event = await done;
      const late = await sb.session({ language: "python" });
      await late.run({ code: "import json\\nx = 2\\nopen('f.txt', 'w').write('late')" });
      writeFileSync(${JSON.stringify(blobFile)}, await late.snapshot());
      const still = await early.run({ code: "x" });
      await sb.close();
      process.stdout.write(JSON.stringify({ earlyRefused, built: !event.error, early: still.ok && still.value }));`;
    assert.deepEqual(await child(first, cache), { earlyRefused: "taken", built: true, early: 1 });
    // Another process started from the file that was built: the record resumes there.
    const second = `
      import { readFileSync } from "node:fs";
      import { createSandbox } from ${JSON.stringify(index)};
      const sb = await createSandbox({ seal: { seccomp: "kill" }, python: { pool: 1, packages: false },
        sessions: { key: ${JSON.stringify(KEY)} } });
      const s = await sb.resume(readFileSync(${JSON.stringify(blobFile)}));
      const r = await s.run({ code: "(x, open('f.txt').read(), json.dumps([1]))" });
      await sb.close();
      process.stdout.write(JSON.stringify(r.ok ? r.value : r.error));`;
    assert.deepEqual(await child(second, cache), [2, "late", "[1]"]);
    // A process whose own snapshot build has another hash seed: refused, by name, before any sidecar.
    const third = `
      import { readFileSync } from "node:fs";
      import { createSandbox } from ${JSON.stringify(index)};
      let built;
      const done = new Promise((r) => (built = r));
      const sb = await createSandbox({ seal: { seccomp: "kill" }, python: { pool: 1, packages: false },
        sessions: { key: ${JSON.stringify(KEY)} }, onEvent: (e) => e.type === "engine.built" && built(e) });
      await sb.run({ language: "python", code: "1" });
      await done;
      let reason = "resumed";
      try { await sb.resume(readFileSync(${JSON.stringify(blobFile)})); } catch (e) { reason = e.reason ?? String(e); }
      await sb.close();
      process.stdout.write(JSON.stringify(reason));`;
    assert.equal(await child(third, join(dir, "other-cache")), "checkpoint");
  });
});
