// Threat: a stateless run leaves something in the Pyodide file system — under /dev, /proc or /dev/shm,
// in metadata (mode, timestamps), in the inode or pipe counters — that a later run (another tenant)
// reads or trips over. One warm sidecar serves every run (pool 1); each attack must leave the next run
// exactly the pristine state, and the reset must not need to retire the sidecar to get there.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import { STATE_PROBE, warmPyodide } from "../helpers/pyodide-state.ts";

describe("pyodide: the file system between runs (one warm sidecar)", () => {
  let engine: PyodideEngine;
  let value: (code: string) => Promise<unknown>;
  let pristine: unknown;
  before(async () => {
    ({ engine, value } = await warmPyodide());
    pristine = await value(STATE_PROBE);
  });
  after(() => engine.close());

  /** Runs the attack, then proves the next run sees exactly the pristine state, from the same sidecar. */
  async function attack(code: string): Promise<void> {
    const started = engine.sidecarsStarted;
    await value(code);
    assert.deepEqual(await value(STATE_PROBE), pristine);
    assert.equal(engine.sidecarsStarted, started, "the reset rebuilt the state in place (no retirement)");
  }

  it("deleting /dev/null cannot turn the next tenant's os.devnull into a file a third run reads", async () => {
    await attack("import os\nos.remove('/dev/null')\n'gone'");
    await value("import os\nprint('tenant-secret', file=open(os.devnull, 'w'))\n'written'");
    assert.deepEqual(
      await value("import os, stat\n[stat.S_ISCHR(os.stat('/dev/null').st_mode), open('/dev/null').read()]"),
      [true, ""],
    );
  });

  it("a file parked in /dev/shm (bytes in the JS heap, outside the WASM cap) is gone", async () => {
    await attack("open('/dev/shm/park', 'wb').write(b'x' * (32 << 20))\nimport os\nos.listdir('/dev/shm')");
  });

  it("a planted /dev/urandom is gone: the next run reads the device again", async () => {
    await attack("import os\nos.remove('/dev/urandom')\nopen('/dev/urandom', 'wb').write(b'A' * 64)\n'planted'");
    assert.deepEqual(
      await value(
        "import os, stat\nb = open('/dev/urandom', 'rb').read(32)\n[stat.S_ISCHR(os.stat('/dev/urandom').st_mode), b != b'A' * 32]",
      ),
      [true, true],
    );
  });

  it("chmod 0 on the devices and the directories is undone", async () => {
    await attack(
      "import os\nfor p in ('/dev/null', '/dev/urandom', '/dev/shm', '/tmp', '/dev'):\n    os.chmod(p, 0)\n'chmod'",
    );
  });

  it("timestamps set with os.utime are undone (every node, devices included)", async () => {
    await attack(
      "import os\nfor p in ('/', '/tmp', '/dev', '/dev/null', '/lib/python314.zip', '/home/pyodide'):\n    os.utime(p, (1, 1))\n'utime'",
    );
  });

  it("the inode counter is not a cross-tenant activity signal", async () => {
    await attack(
      "import os\nfor i in range(500):\n    open(f'/tmp/f{i}', 'w').close()\n    os.remove(f'/tmp/f{i}')\n'churn'",
    );
  });

  it("pipes (their counters and buffered bytes) do not survive", async () => {
    await attack("import os\nfor i in range(20):\n    r, w = os.pipe()\n    os.write(w, b'secret' * 100)\n'pipes'");
  });

  it("symlinks, renamed devices and new directories under /proc are undone", async () => {
    await attack(
      "import os, stat\nos.symlink('/lib/python314.zip', '/tmp/link')\nos.rename('/dev/tty', '/tmp/tty')\nos.mkdir('/proc/planted')\n'nodes'",
    );
  });

  it("bytes written into the standard library zip are put back, not just detected", async () => {
    await attack("f = open('/lib/python314.zip', 'r+b')\nf.seek(100)\nf.write(b'XXXX')\nf.close()\n'tampered'");
    assert.equal(await value("import email.message\n'stdlib intact'"), "stdlib intact");
  });

  it("files left open, dup'd descriptors and a changed working directory are undone", async () => {
    await attack("import os\nkeep = [open('/tmp/held', 'w') for _ in range(5)]\nos.dup(1)\nos.chdir('/dev')\n'held'");
  });

  it("a partial line left in the terminal buffer does not reach the next run", async () => {
    await attack("f = open('/dev/tty', 'w')\nf.write('half a line, no newline')\nf.flush()\n'tty'");
  });
});
