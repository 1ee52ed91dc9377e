// examples/deno and examples/bun in their real runtimes (the deno and bun npm packages' binaries),
// with wasmcell installed as a package in a fresh project, so the runtime's own export conditions
// pick the build. Deno runs with exactly the permissions its example documents.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureBuilt } from "./build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const EXPECTED = /^typescript: \[2,4,6\]\ntimeout: timeout\npython: denied\n$/;

describe("Deno and Bun examples", () => {
  let project: string;
  before(() => {
    ensureBuilt();
    project = mkdtempSync(join(tmpdir(), "wasmcell-runtime-"));
    mkdirSync(join(project, "node_modules"));
    symlinkSync(root, join(project, "node_modules", "wasmcell"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ type: "module", dependencies: { wasmcell: "*" } }));
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  const run = (cmd: string, args: string[], example: string) => {
    copyFileSync(join(root, "examples", example, "main.js"), join(project, "main.js"));
    const r = spawnSync(cmd, args, {
      cwd: project,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, NO_COLOR: "1" },
    });
    assert.equal(r.error, undefined, `${cmd}: ${String(r.error)}`);
    return r;
  };

  it("Deno: runs with --allow-read and the documented --allow-env list, nothing more", () => {
    const env = "TSC_*,NODE_ENV,NODE_INSPECTOR_IPC,VSCODE_INSPECTOR_OPTIONS";
    const r = run(bin("deno"), ["run", "--no-prompt", "--allow-read", `--allow-env=${env}`, "main.js"], "deno");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, EXPECTED);
  });

  it("Deno: JavaScript alone needs only --allow-read", () => {
    writeFileSync(
      join(project, "js.js"),
      `import { run } from "wasmcell";\nconst r = await run({ language: "javascript", code: "6 * 7" });\nconsole.log(r.ok && r.value);\n`,
    );
    const r = spawnSync(bin("deno"), ["run", "--no-prompt", "--allow-read", "js.js"], {
      cwd: project,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "42\n");
  });

  it("Bun: runs as is", () => {
    const r = run(bin("bun"), ["main.js"], "bun");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, EXPECTED);
  });
});
