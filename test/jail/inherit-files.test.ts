// Descriptors passed into the jail (inheritFiles): only a regular file opened read-only goes in
// (a directory's descriptor would let the program walk out of its mounts, a writable one would let
// it change the file), and the program reads it but cannot write it. And a disarmed deadline.
import assert from "node:assert/strict";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { spawnJailed } from "../../src/jail/index.ts";
import { collect, pythonSpec, runPython } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "wasmcell-inherit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("inheritFiles", () => {
  it("a read-only file descriptor is readable at fd 4 and not writable", async () => {
    const file = join(dir, "data.bin");
    writeFileSync(file, "snapshot bytes");
    const fd = openSync(file, "r");
    try {
      const res = await runPython(
        "import os\nprint(os.pread(4, 100, 0).decode())\ntry:\n  os.write(4, b'x')\nexcept OSError as e:\n  print('write', e.errno)",
        { inheritFiles: [fd] },
      );
      assert.equal(res.stdout, "snapshot bytes\nwrite 9\n", res.stderr);
    } finally {
      closeSync(fd);
    }
  });

  it("a directory or a writable descriptor is refused before anything starts", async () => {
    const dirFd = openSync(dir, "r");
    const writable = openSync(join(dir, "w.bin"), "w");
    try {
      await assert.rejects(spawnJailed(pythonSpec("pass", { inheritFiles: [dirFd] })), /is not a regular file/);
      await assert.rejects(spawnJailed(pythonSpec("pass", { inheritFiles: [writable] })), /is not open read-only/);
    } finally {
      closeSync(dirFd);
      closeSync(writable);
    }
  });
});

describe("setDeadline(undefined)", () => {
  it("disarms the wall-clock kill", async () => {
    const jail = await spawnJailed(pythonSpec("import time\ntime.sleep(1.2)\nprint('done')", { wallClockMs: 600 }));
    jail.setDeadline(undefined);
    const res = await collect(jail);
    assert.equal(res.timedOut, false);
    assert.equal(res.stdout, "done\n");
  });
});
