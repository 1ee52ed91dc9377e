// Executes the code examples of README.md and docs/*.md: every ```ts block right after a
// `<!-- test:run -->` line runs as its own ES module (TypeScript, top-level await) in a child Node process, from the package root. Imports
// of `wasmcell` and its subpaths are pointed at the sources the package.json `exports` map builds from,
// so the examples test this checkout without a build. A block passes when it exits 0 (blocks assert
// what they promise with node:assert).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { examples } from "./helpers/docs.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  name: string;
  exports: Record<string, string | { node?: string; default: string }>;
};

/** `wasmcell/ai` → file URL of src/adapters/ai/index.ts (from exports: ./dist/X.js → ./src/X.ts). */
function sourceFor(specifier: string): string | undefined {
  const sub = specifier === pkg.name ? "." : `.${specifier.slice(pkg.name.length)}`;
  const entry = pkg.exports[sub];
  // The examples run on Node: the `node` condition's file where the entry has one.
  const target = typeof entry === "string" ? entry : (entry?.node ?? entry?.default);
  if (!target?.startsWith("./dist/")) return undefined;
  return pathToFileURL(`${root}${target.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")}`).href;
}

function blocks(): { where: string; code: string }[] {
  return examples().map(({ where, code }) => ({
    where,
    code: code.replace(
      /(from\s+|import\s*\(\s*)(["'])(wasmcell(?:\/[\w-]+)?)\2/g,
      (all, pre: string, q: string, spec: string) => {
        const url = sourceFor(spec);
        return url ? `${pre}${q}${url}${q}` : all;
      },
    ),
  }));
}

function runModule(code: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module-typescript", "-e", code], {
      cwd: root,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (exit) => resolve({ code: exit, stderr }));
  });
}

describe("README and docs/ examples", () => {
  const found = blocks();
  test("there are examples to run", () => {
    assert.ok(found.length > 0, "no <!-- test:run --> ```ts blocks in README.md or docs/");
  });
  for (const block of found) {
    test(block.where, async () => {
      const r = await runModule(block.code);
      assert.equal(r.code, 0, r.stderr);
    });
  }
});

describe("README Usage says what a new project needs", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const usage = readme.slice(
    readme.indexOf("## Usage"),
    readme.indexOf("<!-- test:run -->", readme.indexOf("## Usage")),
  );

  test("it says to run `npx wasmcell setup`", () => {
    assert.match(usage, /^npx wasmcell setup\b/m);
  });

  test('it says a .ts example needs "type": "module" (or .mts), and that is true of an npm init project', () => {
    assert.match(usage, /"type": "module"/);
    assert.match(usage, /\.mts/);
    // What `npm init -y` writes ("type": "commonjs"), then the same project as a module.
    const dir = mkdtempSync(join(tmpdir(), "wasmcell-init-"));
    try {
      writeFileSync(
        join(dir, "example.ts"),
        `import { strict } from "node:assert";\nconst n: number = await Promise.resolve(1);\nstrict.equal(n, 1);\n`,
      );
      const run = () => spawnSync(process.execPath, ["example.ts"], { cwd: dir, encoding: "utf8" });
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "x", version: "1.0.0", type: "commonjs" }));
      assert.notEqual(run().status, 0, "a .ts example in a commonjs project fails");
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "x", version: "1.0.0", type: "module" }));
      const ok = run();
      assert.equal(ok.status, 0, ok.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
