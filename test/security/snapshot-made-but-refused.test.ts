// Threat: a session snapshot that `snapshot()` (or an idle eviction) makes but every resume refuses.
// Guest code chose what its state holds: a file dated with a fractional or negative time, a symbolic
// link whose target or a path over 4,096 characters, more changed files than a record carries, a cwd
// in /dev or one it moved away. The record was made, sealed and stored; its own resume then refused it as
// "corrupt", so after an idle eviction (or on another MCP replica) the session was lost without a word.
// The rule: capture and load share one definition of a valid record (sidecar/record-header.ts), so a
// session is refused when it is snapshotted, with the reason (and stays where it is), or its snapshot
// always resumes — in the same sandbox after an eviction, and in another one with the same key.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SnapshotUnsupportedError } from "../../src/core/errors.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import type { RunResult } from "../../src/core/types.ts";
import { createSandbox } from "../../src/index.ts";
import { FULL } from "../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";
const IDLE_MS = 200;

interface Case {
  name: string;
  /** Makes the state. */
  setup: string;
  /** Reads it back: its value must be `expect` wherever the session is. */
  check: string;
  expect: unknown;
}

const CASES: Case[] = [
  {
    name: "a fractional file time",
    setup: "import os\nopen('/tmp/frac', 'w').write('x')\nos.utime('/tmp/frac', (1.0001, 1.0001))",
    check: "import os\nos.stat('/tmp/frac').st_mtime",
    expect: 1,
  },
  {
    name: "a negative file time",
    setup: "import os\nopen('/tmp/neg', 'w').write('x')\nos.utime('/tmp/neg', (-5, -5))",
    check: "import os\nos.stat('/tmp/neg').st_mtime",
    expect: -5,
  },
  {
    name: "a link target over 4,096 characters",
    setup: "import os\nos.symlink('a' * 5000, '/tmp/long-link')",
    check: "import os\nos.path.islink('/tmp/long-link')",
    expect: true,
  },
  {
    name: "a path over 4,096 characters",
    setup:
      "import os\np = '/tmp'\nfor i in range(20):\n    p += '/' + 'd' * 250\n    os.mkdir(p)\nopen(p + '/f', 'w').write('deep')",
    check: "import os\nsum(len(d) for d, _, _ in os.walk('/tmp')) > 4096",
    expect: true,
  },
  {
    name: "a working directory in /dev",
    setup: "import os\nos.chdir('/dev')",
    check: "import os\nos.getcwd()",
    expect: "/dev",
  },
  {
    name: "a working directory that was moved away",
    setup: "import os\nos.makedirs('/tmp/a/b')\nos.chdir('/tmp/a/b')\nos.rename('/tmp/a', '/tmp/c')\nx = 7",
    check: "x",
    expect: 7,
  },
];

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a python snapshot is refused when it is made, or it resumes", () => {
  for (const c of CASES) {
    it(c.name, { timeout: 180_000 }, async () => {
      const events: SandboxEvent[] = [];
      const options = { seal: FULL, python: { pool: 1 }, sessions: { key: KEY, idleMs: IDLE_MS } };
      await using sb = await createSandbox({ ...options, onEvent: (e) => events.push(e) });
      await using s = await sb.session({ language: "python" });
      value(await s.run({ code: c.setup }));
      // Idle: evicted into the store, or refused (said) and kept where it is.
      const said = () => events.find((e) => e.type === "session.evicted");
      for (let i = 0; i < 300 && !said(); i++) await sleep(50);
      const eviction = said() as { error?: string } | undefined;
      assert.ok(eviction, "the idle session was neither evicted nor refused");
      // Either way its next run finds its state: never "its state is gone".
      assert.deepEqual(value(await s.run({ code: c.check })), c.expect);
      let blob: Uint8Array;
      try {
        blob = await s.snapshot();
      } catch (error) {
        // Refused when it is made: with the reason, the same one its eviction gave.
        assert.ok(error instanceof SnapshotUnsupportedError, String(error));
        assert.equal(error.reason, "state");
        assert.ok(eviction.error, "the snapshot was refused, but the eviction was not");
        assert.match(error.message, /cannot be snapshotted: .+/);
        assert.deepEqual(value(await s.run({ code: c.check })), c.expect);
        return;
      }
      assert.equal(eviction.error, undefined, `evicted with a refusal, yet snapshot() made one: ${eviction.error}`);
      // Made: it resumes on another replica (another sandbox with the same key).
      await using other = await createSandbox(options);
      await using resumed = await other.resume(blob);
      assert.deepEqual(value(await resumed.run({ code: c.check })), c.expect);
    });
  }

  it("more changed files than a record carries: refused when made, kept", { timeout: 300_000 }, async () => {
    await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { key: KEY } });
    await using s = await sb.session({ language: "python" });
    const made = "import os\nos.mkdir('/tmp/m')\nfor i in range(100_001):\n    open(f'/tmp/m/{i}', 'w').close()";
    value(await s.run({ code: made, limits: { timeoutMs: 200_000 } }));
    await assert.rejects(s.snapshot(), (error: unknown) => {
      assert.ok(error instanceof SnapshotUnsupportedError, String(error));
      assert.match(error.message, /more than 100000 files/);
      return true;
    });
    assert.equal(value(await s.run({ code: "import os\nlen(os.listdir('/tmp/m'))" })), 100_001);
  });
});
