// Threat: guest code changes the package library every later run (and every other tenant) imports —
// a planted requests/__init__.py, a deleted module, a monkeypatched module object left in memory.
// The library is read-only from the guest on both tiers, and a stateless run starts from the
// checkpoint (Pyodide) or a fresh process (native), so nothing a run does to it is seen by the next.
// And a library changed on the host after setup (a planted file, an edited module) is refused by
// both engines at start, with an `integrity` event and an IntegrityError naming the file.
import assert from "node:assert/strict";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createSandbox, IntegrityError, type Sandbox, type SandboxEvent } from "../../src/index.ts";
import { checkSetup } from "../../src/setup/index.ts";
import { installedLibrary } from "../../src/library/library.ts";

const ATTACKS = (root: string) => `
import os, shutil
root = ${JSON.stringify(root)}
target = os.path.join(root, "six.py")
def attempt(fn):
    try:
        fn()
        return "ALLOWED"
    except OSError as e:
        return type(e).__name__
results = {
    "append": attempt(lambda: open(target, "a").write("PWNED = 1\\n")),
    "truncate": attempt(lambda: open(target, "w")),
    "create": attempt(lambda: open(os.path.join(root, "evil.py"), "w").write("x")),
    "unlink": attempt(lambda: os.unlink(target)),
    "rename": attempt(lambda: os.rename(target, target + ".bak")),
    "mkdir": attempt(lambda: os.mkdir(os.path.join(root, "evil"))),
    "rmtree": attempt(lambda: shutil.rmtree(os.path.join(root, "tabulate-0.8.9.egg-info"))),
    "chmod": attempt(lambda: os.chmod(target, 0o777)),
    "pycache": attempt(lambda: open(os.path.join(root, "__pycache__", "six.cpython-314.pyc"), "wb").write(b"x")),
}
print(results)
`;

for (const engine of ["pyodide", "native"] as const) {
  describe(`package library tampering on ${engine}`, () => {
    let sandbox: Sandbox;
    const root = engine === "pyodide" ? "/lib/wasmcell-packages" : "/sandbox/packages";
    before(async () => {
      assert.ok(installedLibrary(), "the package library is not installed: run `wasmcell setup` first (.ci/run does)");
      sandbox = await createSandbox({ python: { engine, pool: 1 } });
    });
    after(() => sandbox?.close());

    test("every write to the library is refused, and the host's files are unchanged", async () => {
      const r = await sandbox.run({ language: "python", code: ATTACKS(root) });
      assert.equal(r.ok, true, JSON.stringify(r.ok ? r.stdout : r.error));
      const results = r.stdout.trim();
      assert.ok(!results.includes("ALLOWED"), results);
      const check = checkSetup({ snapshot: false });
      assert.deepEqual(check.problems, [], "the installed library still matches files.sha256");
      const again = await sandbox.run({ language: "python", code: "import six\nprint(hasattr(six, 'PWNED'))" });
      assert.equal(again.stdout.trim(), "False");
    });

    test("a module patched in memory by one run is pristine in the next", async () => {
      const patch = await sandbox.run({
        language: "python",
        code: "import yaml, requests\nyaml.safe_load = lambda s: 'pwned'\nrequests.get = None\nprint('patched')",
      });
      assert.equal(patch.stdout.trim(), "patched");
      const next = await sandbox.run({
        language: "python",
        code: "import yaml, requests\nprint(yaml.safe_load('a: 1'), callable(requests.get))",
      });
      assert.equal(next.stdout.trim(), "{'a': 1} True");
    });
  });
}

for (const engine of ["pyodide", "native"] as const) {
  describe(`a package library changed on the host after setup, on ${engine}`, () => {
    test("an edited module or a planted file: createSandbox refuses the library, naming the file", async () => {
      const library = installedLibrary();
      assert.ok(library, "the package library is not installed: run `wasmcell setup` first (.ci/run does)");
      const six = join(library.site, "six.py");
      const original = readFileSync(six);
      const planted = join(library.site, "sitecustomize.py");
      const attempt = async () => {
        const events: SandboxEvent[] = [];
        const error = await createSandbox({ python: { engine, pool: 1 }, onEvent: (e) => events.push(e) }).then(
          async (s) => {
            await s.close();
            return undefined;
          },
          (e: unknown) => e,
        );
        return { error, events };
      };
      try {
        chmodSync(six, 0o644);
        writeFileSync(six, Buffer.concat([original, Buffer.from("\nPWNED = 1\n")]));
        const first = await attempt();
        let error = first.error;
        const events = first.events;
        assert.ok(error instanceof IntegrityError, String(error));
        assert.equal(error.file, six);
        assert.match(error.message, /six\.py was modified after setup/);
        assert.ok(events.some((e) => e.type === "integrity" && e.action === "refused" && e.file === six));

        writeFileSync(six, original);
        writeFileSync(planted, "import os\n");
        ({ error } = await attempt());
        assert.ok(error instanceof IntegrityError && error.file === planted, String(error));
        rmSync(planted);
        // Put back as setup left it: accepted again (the same bytes re-hash to the recorded sha256).
        ({ error } = await attempt());
        assert.equal(error, undefined);
      } finally {
        rmSync(planted, { force: true });
        writeFileSync(six, original);
        chmodSync(six, 0o444);
      }
    });
  });
}
