// Threat: the guest forges what comes back. Its own process reports the files it returns (a native
// program can write its own result line on the driver's result fd; a Pyodide run names its files as
// it likes) and the error it ended with. A library caller doing `writeFile(join(dir, f.path))` must
// never get a path that escapes `dir`, so every returned path is checked like an input path and a bad
// one fails the run as `denied`, with no files; and `timeout`/`memory` are never the guest's word.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closeNative, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

// The driver's fd for its result line (src/engines/native/driver.py): a guest writes its own there.
const forge = (files: { path: string; data: string }[], value = "forged") =>
  `import os, json\nos.write(4, (json.dumps({"envelope": {"ok": True, "value": ${JSON.stringify(value)}, "valueKind": "json"}, "files": ${JSON.stringify(files)}}) + "\\n").encode())\nos._exit(0)`;

describe("native: a forged result line", () => {
  after(closeNative);

  for (const path of ["../../../x", "/etc/cron.d/x", "a\0b", "", "a/../../b", "./x", "dir/"]) {
    it(`returning ${JSON.stringify(path)} fails the run as denied, with no files`, async () => {
      const r = await runNative(forge([{ path, data: "eA==" }]));
      assert.equal(!r.ok && r.error.kind, "denied", JSON.stringify(r));
      assert.deepEqual(r.files, []);
    });
  }

  it("a duplicate path fails the run as denied", async () => {
    const r = await runNative(
      forge([
        { path: "a", data: "eA==" },
        { path: "a", data: "eQ==" },
      ]),
    );
    assert.equal(!r.ok && r.error.kind, "denied");
  });

  it("more files than maxFiles fail the run (not a silent drop)", async () => {
    const r = await runNative(
      forge([
        { path: "a", data: "eA==" },
        { path: "b", data: "eA==" },
      ]),
      { maxFiles: 1 },
    );
    assert.equal(!r.ok && r.error.kind, "output_limit");
  });

  it("a forged timeout or memory error is a runtime error", async () => {
    const r = await runNative(
      `import os, json\nos.write(4, (json.dumps({"envelope": {"ok": False, "error": {"kind": "timeout", "name": "KeyboardInterrupt", "message": "x"}}, "files": []}) + "\\n").encode())\nos._exit(0)`,
    );
    assert.equal(!r.ok && r.error.kind, "runtime");
    const raised = await runNative("raise KeyboardInterrupt");
    assert.equal(!raised.ok && raised.error.kind, "runtime");
    assert.equal(!raised.ok && raised.error.name, "KeyboardInterrupt");
  });

  it("a plain relative path still comes back", async () => {
    const r = await runNative(forge([{ path: "ok/fine.txt", data: "eA==" }]));
    assert.equal(r.ok && r.files[0]?.path, "ok/fine.txt");
  });
});

describe("pyodide: file names the run chose", () => {
  after(closePyodide);

  it("a name the host would not accept as an input path (a backslash) fails the run as denied", async () => {
    const r = await runPy("open('a\\\\..\\\\b', 'w').write('x')");
    assert.equal(!r.ok && r.error.kind, "denied", JSON.stringify(r));
    assert.deepEqual(r.files, []);
  });

  it("a guest's own KeyboardInterrupt and MemoryError are runtime errors", async () => {
    for (const name of ["KeyboardInterrupt", "MemoryError"]) {
      const r = await runPy(`raise ${name}`);
      assert.equal(!r.ok && r.error.kind, "runtime", name);
      assert.equal(!r.ok && r.error.name, name);
    }
  });

  it("a 30 MiB exception message comes back capped, naming the cap", async () => {
    const r = await runPy("raise ValueError('x' * (30 << 20))", { memoryMb: 256 });
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.ok(!r.ok && r.error.message.length <= 8192);
    assert.match(!r.ok ? r.error.message : "", /\[error message cut to 8192 characters\]$/);
  });
});
