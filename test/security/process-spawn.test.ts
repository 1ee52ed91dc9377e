// Threat: guest code starts other programs (a shell, a second interpreter, anything on the host).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, describe, it } from "node:test";
import { uniqueName } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";
import { closePyodide, PY_PROBE, runPy } from "../helpers/pyodide.ts";

describe("native", () => {
  after(closeNative);

  it("fork, vfork, posix_spawn, subprocess, os.system and execveat all fail; there is no shell to exec", async () => {
    const marker = `/tmp/${uniqueName("wasmcell-spawned")}`;
    const r = await runNative(`${PROBES}
import subprocess
{
  "fork": probe(os.fork),
  "subprocess": probe(lambda: subprocess.run(["/usr/bin/python3", "-c", "open('${marker}', 'w')"])),
  "posix_spawn": probe(lambda: os.posix_spawn("/usr/bin/python3", ["python3", "-c", "1"], {})),
  "system": os.system("touch ${marker}"),
  "popen": probe(lambda: os.popen("id").read()),
  "exec_shell": probe(lambda: os.execv("/bin/sh", ["sh", "-c", "id"])),
  "raw_fork": raw(57),
  "raw_vfork": raw(58),
  "raw_clone_process": raw(56, 17, 0, 0, 0, 0),
  "raw_clone3": raw(435, 0, 0),
  "raw_execveat": raw(322, 0, 0, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      fork: "PermissionError:EPERM",
      subprocess: "PermissionError:EPERM",
      posix_spawn: "PermissionError:EPERM",
      // the shell could not be started: status 127 << 8
      system: 32512,
      popen: "PermissionError:EPERM",
      exec_shell: "FileNotFoundError:ENOENT",
      raw_fork: "EPERM",
      raw_vfork: "EPERM",
      raw_clone_process: "EPERM",
      raw_clone3: "ENOSYS",
      raw_execveat: "EPERM",
    });
    assert.equal(existsSync(marker), false);
  });
});

describe("pyodide", () => {
  after(closePyodide);

  it("subprocess, os.system, os.popen, fork and posix_spawn fail; no marker file appears on the host", async () => {
    const marker = `/tmp/${uniqueName("wasmcell-spawned")}`;
    const r = await runPy(`${PY_PROBE}
import os, subprocess
{
  "subprocess": probe(lambda: subprocess.run(["/bin/sh", "-c", "touch ${marker}"])),
  "system": probe(lambda: os.system("touch ${marker}")),
  "popen": probe(lambda: os.popen("touch ${marker}")),
  "fork": probe(os.fork),
  "posix_spawn": probe(lambda: os.posix_spawn("/bin/sh", ["sh", "-c", "touch ${marker}"], {})),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    for (const [k, outcome] of Object.entries((r.ok ? r.value : {}) as Record<string, string>))
      assert.notEqual(outcome, "ALLOWED", k);
    assert.equal(existsSync(marker), false);
  });

  it("libc system() through ctypes (Emscripten hands it to Node's child_process) is denied by the seal", async () => {
    const marker = `/tmp/${uniqueName("wasmcell-spawned")}`;
    const r = await runPy(`import ctypes\nctypes.CDLL(None).system(b"touch ${marker}")`);
    assert.equal(!r.ok && r.error.kind, "denied", JSON.stringify(r));
    assert.equal(existsSync(marker), false);
    const next = await runPy("'next'");
    assert.equal(next.ok && next.value, "next");
  });
});
