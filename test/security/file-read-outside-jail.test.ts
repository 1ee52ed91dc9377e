// Threat: guest code reads host files (credentials, other processes' environment, the user's home).
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";

describe("native", () => {
  after(closeNative);

  it("sees none of the host's files: /etc/passwd, /proc/1/environ, the home directory, this repository", async () => {
    // the host user's home (root's when HOME points into a directory the jail also has, like /tmp)
    const home = homedir().startsWith("/tmp") ? "/root" : homedir();
    const r = await runNative(`${PROBES}
def rd(p):
    with open(p, "rb") as f: return f.read()
{
  "root": sorted(os.listdir("/")),
  "etc": sorted(os.listdir("/etc")),
  "passwd": probe(lambda: rd("/etc/passwd")),
  "shadow": probe(lambda: rd("/etc/shadow")),
  "proc1_environ": probe(lambda: rd("/proc/1/environ")),
  "self_environ": probe(lambda: rd("/proc/self/environ")),
  "home": probe(lambda: os.listdir(${JSON.stringify(home)})),
  "this_file": probe(lambda: rd(${JSON.stringify(fileURLToPath(import.meta.url))})),
  "open_by_handle_at": raw(304, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      root: ["dev", "etc", "lib", "lib64", "sandbox", "tmp", "usr"],
      etc: ["alternatives", "ld.so.cache", "matplotlibrc"],
      passwd: "FileNotFoundError:ENOENT",
      shadow: "FileNotFoundError:ENOENT",
      proc1_environ: "FileNotFoundError:ENOENT",
      self_environ: "FileNotFoundError:ENOENT",
      home: "FileNotFoundError:ENOENT",
      this_file: "FileNotFoundError:ENOENT",
      open_by_handle_at: "EPERM",
    });
  });

  it("a symlink in the working directory is not followed when files come back", async () => {
    const r = await runNative(
      "import os\nos.symlink('/etc/passwd', 'leak')\nos.symlink('/usr/lib/python3.11/os.py', 'os.py')\nopen('real.txt', 'w').write('x')\nsorted(os.listdir('.'))",
    );
    assert.equal(r.ok, true);
    assert.deepEqual(r.ok && r.value, ["leak", "os.py", "real.txt"]);
    assert.deepEqual(
      r.files.map((f) => f.path),
      ["real.txt"],
    );
  });
});
