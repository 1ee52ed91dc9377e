// Any install path: as root, the package installed under a 0700 directory (/root/project, `mktemp -d`)
// runs Python in both tiers. The uid-65534 jail cannot reach those files, so the jail binds staged
// copies (src/jail/stage.ts) at the same paths.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { STAGE_ROOT } from "../../src/jail/stage.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const isRoot = process.geteuid?.() === 0;

describe("a checkout under a 0700 directory", { skip: !isRoot && "only a root host drops to uid 65534" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-0700-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs Python on the native and Pyodide tiers, as root, with the full seal", () => {
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const project = join(dir, "project");
    cpSync(join(root, "src"), join(project, "src"), { recursive: true });
    cpSync(join(root, "package.json"), join(project, "package.json"));
    symlinkSync(join(root, "node_modules"), join(project, "node_modules"));
    const script = `
      import { createSandbox } from "./src/index.ts";
      for (const engine of ["native", "pyodide"]) {
        const sandbox = await createSandbox({ python: { engine, pool: 1 } });
        const r = await sandbox.run({ language: "python", code: "6 * 7" });
        console.log(engine, r.ok ? r.value : JSON.stringify(r.error));
        await sandbox.close();
      }`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: project,
      encoding: "utf8",
      timeout: 180_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "native 42\npyodide 42\n");
    // The staged copies are the host user's, readable by all, writable by nobody else.
    const st = lstatSync(STAGE_ROOT);
    assert.equal(st.uid, 0);
    assert.equal(st.mode & 0o022, 0);
    // The process that used them said so while it ran, and no longer does once it exited.
    assert.deepEqual(
      readdirSync(STAGE_ROOT).filter((f) => f.includes(`.use.${r.pid}.`)),
      [],
    );
  });
});
