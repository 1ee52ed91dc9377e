// The package on every supported Node.js major (22 and 24 here; 26 runs everything else): the built
// package (dist/, through its `node` export condition) runs JavaScript, TypeScript and Python, and
// every README example runs unchanged.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureBuilt } from "./edge/build.ts";
import { examples } from "./helpers/docs.ts";
import { nodeBinary, OTHER_NODES } from "./helpers/node-versions.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const blocks = examples();

/** Runs TypeScript module code with `node` from the package root: `wasmcell` resolves to dist/. */
function runWith(node: string, code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ["--no-warnings", "--input-type=module-typescript", "-e", code], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? `${root}.wasmcell-cache` },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (exit) => resolve({ code: exit, stdout, stderr }));
  });
}

const SMOKE = `
import assert from "node:assert/strict";
import { createSandbox } from "wasmcell";
const sandbox = await createSandbox();
const js = await sandbox.run({ language: "javascript", code: "[1, 2, 3].map((x) => x * 2)" });
assert.deepEqual(js.ok && js.value, [2, 4, 6]);
const ts = await sandbox.run({ language: "typescript", code: "const n: number = 41;\\nn + 1" });
assert.equal(ts.ok && ts.value, 42);
const slow = await sandbox.run({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 100 } });
assert.equal(!slow.ok && slow.error.kind, "timeout");
const py = await sandbox.run({ language: "python", code: "sum(range(10))" });
assert.equal(py.ok && py.value, 45, JSON.stringify(py));
await sandbox.close();
console.log("smoke ok", process.version);
`;

for (const version of OTHER_NODES) {
  describe(`Node ${version}`, () => {
    let node: string;
    before(() => {
      ensureBuilt();
      node = nodeBinary(version);
    });

    it("smoke: JavaScript, TypeScript, a timeout and Python through the built package", async () => {
      const r = await runWith(node, SMOKE);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `smoke ok v${version}\n`);
    });

    for (const block of blocks) {
      it(block.where, async () => {
        const r = await runWith(node, block.code);
        assert.equal(r.code, 0, r.stderr);
      });
    }
  });
}
