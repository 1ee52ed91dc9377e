// Threat: guest code starts other programs (a shell, a second interpreter, anything on the host).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, describe, it } from "node:test";
import { uniqueName } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";

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
