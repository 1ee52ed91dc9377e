// Threat: guest code writes outside its working directory (host files, the jail's own binds).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, describe, it } from "node:test";
import { uniqueName } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

describe("native", () => {
  after(closeNative);

  it("everything but the scratch is read-only; scratch writes stay in the jail and only the working directory comes back", async () => {
    const name = uniqueName("wasmcell-escape");
    const r = await runNative(`${PROBES}
def wr(p):
    with open(p, "w") as f: f.write("pwned")
N = ${JSON.stringify(name)}
{
  "root": probe(lambda: wr("/" + N)),
  "etc": probe(lambda: wr("/etc/" + N)),
  "usr": probe(lambda: wr("/usr/lib/" + N)),
  "stdlib": probe(lambda: wr("/usr/lib/python3.11/os.py")),
  "driver": probe(lambda: wr("/sandbox/python/driver.py")),
  "dev": probe(lambda: wr("/dev/" + N)),
  "dev_shm": probe(lambda: wr("/dev/shm/" + N)),
  "dev_null": probe(lambda: wr("/dev/null")),
  "scratch": probe(lambda: wr("/tmp/" + N)),
  "dotdot": probe(lambda: wr("../" + N + ".2")),
  "workdir": probe(lambda: wr(N + ".txt")),
  "mount": raw(165, 0, 0, 0, 0, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      root: "OSError:EROFS",
      etc: "OSError:EROFS",
      usr: "OSError:EROFS",
      stdlib: "OSError:EROFS",
      driver: "OSError:EROFS",
      // /dev is read-only too (it is a tmpfs with no size cap); writing to a device still works
      dev: "OSError:EROFS",
      dev_shm: "OSError:EROFS",
      dev_null: "ALLOWED",
      scratch: "ALLOWED",
      dotdot: "ALLOWED",
      workdir: "ALLOWED",
      mount: "EPERM",
    });
    assert.deepEqual(
      r.files.map((f) => [f.path, Buffer.from(f.bytes).toString()]),
      [[`${name}.txt`, "pwned"]],
    );
    for (const p of [
      `/${name}`,
      `/etc/${name}`,
      `/usr/lib/${name}`,
      `/tmp/${name}`,
      `/tmp/${name}.2`,
      `/tmp/work/${name}.txt`,
    ])
      assert.equal(existsSync(p), false, p);
  });

  it("a run cannot see files an earlier run wrote", async () => {
    const first = await runNative("open('/tmp/work/left.txt', 'w').write('x'); open('/tmp/left.txt', 'w').write('x')");
    assert.equal(first.ok, true);
    const second = await runNative(
      "import os\n[os.path.exists('/tmp/work/left.txt'), os.path.exists('/tmp/left.txt')]",
    );
    assert.deepEqual(second.ok && second.value, [false, false]);
  });
});

describe("pyodide", () => {
  after(closePyodide);

  it("guest writes land in Pyodide's in-memory file system: no host file appears, only the working directory comes back", async () => {
    const name = uniqueName("wasmcell-escape");
    const r = await runPy(`
N = ${JSON.stringify(name)}
for p in ["/" + N, "/tmp/" + N, "/home/" + N, "/lib/" + N, N]:
    open(p, "w").write("pwned")
"written"`);
    assert.equal(r.ok && r.value, "written", JSON.stringify(!r.ok && r.error));
    for (const p of [`/${name}`, `/tmp/${name}`, `/home/${name}`, `/lib/${name}`])
      assert.equal(existsSync(p), false, p);
    assert.deepEqual(
      r.files.map((f) => f.path),
      [name],
    );
  });
});

// The host side of the same threat: `wasmcell run --out-dir` writes the files a run returns, and a
// guest picks their names. A name must never make the CLI write outside the directory.
describe("cli --out-dir", () => {
  const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

  it("never writes through a symlink already in the output directory", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wasmcell-outdir-"));
    try {
      const outDir = join(dir, "out");
      const outside = join(dir, "outside.txt");
      await writeFile(outside, "untouched");
      await mkdir(outDir);
      await symlink(outside, join(outDir, "evil.txt"));
      await mkdir(join(dir, "elsewhere"));
      await symlink(join(dir, "elsewhere"), join(outDir, "sub"));
      const code =
        "import os\nopen('evil.txt', 'w').write('pwned')\nos.makedirs('sub', exist_ok=True)\nopen('sub/x.txt', 'w').write('pwned')";
      const r = spawnSync(process.execPath, [main, "run", "--lang", "python", "--out-dir", outDir, "-e", code], {
        encoding: "utf8",
      });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /did not write evil\.txt .*refused: the target is a symbolic link/);
      assert.match(r.stderr, /did not write sub\/x\.txt .*refused: it would land outside the output directory/);
      assert.equal(await readFile(outside, "utf8"), "untouched");
      assert.equal(existsSync(join(dir, "elsewhere", "x.txt")), false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
