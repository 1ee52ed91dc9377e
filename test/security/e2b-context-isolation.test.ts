// Threat: through wasmcell/e2b, one tenant's code reads or changes another's state. An application
// gives each user an E2B-style sandbox (often over one shared wasmcell sandbox, whose Pyodide pool
// moves sessions between sidecars as data), and each sandbox may hold several contexts. Tenant A
// leaves a secret in every place it can (globals, a patched builtin, a module attribute, a file in
// its working directory, the sandbox's files); tenant B's code, and a second context of A's own
// sandbox, must see none of it. A context id of A's (leaked or guessed) must not let B run code in
// A's interpreter. Run on every engine that keeps E2B contexts: Pyodide, QuickJS, and the native
// tier once its sessions exist.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Sandbox } from "../../src/adapters/e2b/index.ts";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { ENGINE_INFO, type EngineInfo } from "../../src/core/types.ts";
import { createSandbox, type Sandbox as WasmcellSandbox } from "../../src/index.ts";

const SECRET = "tenant-a-secret-7f3e";

const PY_PLANT = `
import builtins, json, math, os
secret = "${SECRET}"
builtins.leak = secret
json.leak = secret
math.pi = 3
open("secret.txt", "w").write(secret)
os.makedirs("/tmp/a", exist_ok=True)
open("/tmp/a/secret.txt", "w").write(secret)
"planted"
`;
const PY_PROBE = `
import builtins, json, math, os
found = []
if "secret" in globals(): found.append("global")
if hasattr(builtins, "leak"): found.append("builtin")
if hasattr(json, "leak"): found.append("module")
if math.pi != 3.141592653589793: found.append("patched module")
if os.path.exists("secret.txt"): found.append("cwd file")
if os.path.exists("/tmp/a/secret.txt"): found.append("tmp file")
found
`;
const JS_PLANT = `
globalThis.secret = "${SECRET}";
var leaked = "${SECRET}";
Array.prototype.leak = "${SECRET}";
const realPush = Array.prototype.push;
JSON.stringify = () => "${SECRET}";
fs.writeFileSync("secret.txt", "${SECRET}");
"planted"
`;
const JS_PROBE = `
const found = [];
if (typeof globalThis.secret !== "undefined") found.push("global");
if (typeof leaked !== "undefined") found.push("var");
if ([].leak !== undefined) found.push("prototype");
if (JSON.stringify(1) !== "1") found.push("patched JSON");
if (fs.existsSync("secret.txt")) found.push("fs file");
found
`;

const nativeSessions = (ENGINE_INFO.native as EngineInfo).sessions;
const cases = [
  { name: "Python (Pyodide)", language: "python", pythonEngine: "pyodide", plant: PY_PLANT, probe: PY_PROBE },
  {
    name: "Python (native)",
    language: "python",
    pythonEngine: "native",
    plant: PY_PLANT,
    probe: PY_PROBE,
    skip: nativeSessions ? false : "native sessions are not in this build",
  },
  { name: "JavaScript (QuickJS)", language: "javascript", pythonEngine: "auto", plant: JS_PLANT, probe: JS_PROBE },
] as const;

describe("wasmcell/e2b: sandboxes and contexts cannot see each other's state", () => {
  let wasmcell: WasmcellSandbox;
  before(async () => {
    // One Pyodide sidecar for everyone: sessions must move through it as data, never share it live.
    wasmcell = await createSandbox({ python: { pool: 1 } });
  });
  after(() => wasmcell.close());

  for (const c of cases) {
    describe(c.name, { skip: "skip" in c ? c.skip : false }, () => {
      let a: Sandbox;
      let b: Sandbox;
      before(async () => {
        const opts = { sandbox: wasmcell, pythonEngine: c.pythonEngine, limits: { timeoutMs: 20_000 } } as const;
        a = await Sandbox.create(opts);
        b = await Sandbox.create(opts);
        const planted = await a.runCode(c.plant, { language: c.language });
        assert.equal(planted.error, undefined, planted.error?.traceback);
        assert.equal(planted.text, "planted");
        await a.files.write("shared-by-a.txt", SECRET);
        // A's own context sees what it planted: the probe can find it.
        const own = await a.runCode(c.probe, { language: c.language });
        assert.notEqual(own.text, "[]", "the probe finds the planted state in A's own context");
      });
      after(async () => {
        await a.kill();
        await b.kill();
      });

      test("another sandbox's code sees nothing of it", async () => {
        const e = await b.runCode(c.probe, { language: c.language });
        assert.equal(e.error, undefined, e.error?.traceback);
        assert.equal(e.text, "[]");
        const file = await b.runCode(
          c.language === "python" ? "import os; os.path.exists('shared-by-a.txt')" : "fs.existsSync('shared-by-a.txt')",
          { language: c.language },
        );
        assert.match(file.text ?? "", /^(False|false)$/);
        assert.equal(await b.files.exists("shared-by-a.txt"), false);
        assert.deepEqual(await b.files.list("/home/user"), []);
      });

      test("a second context of the same sandbox has an interpreter of its own", async () => {
        const ctx = await a.createCodeContext({ language: c.language });
        const e = await a.runCode(c.probe, { context: ctx });
        assert.equal(e.error, undefined, e.error?.traceback);
        // Only the sandbox's files are shared between its contexts (E2B's contexts share one disk):
        // the file the first context's code wrote came back into them.
        assert.equal(e.text, c.language === "python" ? "['cwd file']" : "[ 'fs file' ]");
        await a.removeCodeContext(ctx);
      });

      test("A's context id, given to B, runs nothing: not in A's interpreter, not anywhere", async () => {
        const stolen = (await a.listCodeContexts()).find((x) => x.language === c.language)!;
        await assert.rejects(b.runCode("1", { context: stolen }), InvalidOptionError);
        await assert.rejects(b.runCode("1", { context: { ...stolen } }), InvalidOptionError);
        await assert.rejects(b.restartCodeContext(stolen.id), InvalidOptionError);
        await assert.rejects(b.removeCodeContext(stolen.id), InvalidOptionError);
        // A's context is untouched by the attempts.
        const still = await a.runCode(c.language === "python" ? "secret" : "secret", { context: stolen });
        assert.equal(still.text, SECRET);
      });

      test("a restarted context starts empty; a removed context's id is dead", async () => {
        const ctx = await a.createCodeContext({ language: c.language });
        await a.runCode(c.plant, { context: ctx });
        await a.restartCodeContext(ctx);
        const fresh = await a.runCode(c.probe, { context: ctx });
        assert.equal(fresh.text, c.language === "python" ? "['cwd file']" : "[ 'fs file' ]");
        await a.removeCodeContext(ctx);
        await assert.rejects(a.runCode("1", { context: ctx }), InvalidOptionError);
      });
    });
  }
});
