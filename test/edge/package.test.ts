// The edge-clean package: bundling wasmcell for a Worker or a browser pulls in only the JavaScript
// engine, nothing Node-only, and a Python run there is a failure result that says why.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { blankSourceFile } from "ts-blank-space";
import type TypeScript from "typescript";
import * as edge from "../../src/edge.ts";
import * as node from "../../src/index.ts";
import { ensureBuilt } from "./build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("edge package", () => {
  it("the edge entry exports the same names as the Node entry", () => {
    assert.deepEqual(Object.keys(edge).sort(), Object.keys(node).sort());
  });

  it("a Python run on the edge build is a denied result naming why, not a throw", async () => {
    const sandbox = await edge.createSandbox();
    try {
      for (const engine of ["pyodide", "native"] as const) {
        const r = await sandbox.run({ language: "python", code: "1 + 1", engine });
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.error.kind, "denied");
        assert.match(!r.ok ? r.error.message : "", /only the Node\.js build/);
      }
      const js = await sandbox.run({ language: "typescript", code: "const a: number = 41;\na + 1" });
      assert.equal(js.ok && js.value, 42);
    } finally {
      await sandbox.close();
    }
  });

  it("package.json sends every edge condition to the edge entry, and only node to the Node entry", () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
      exports: Record<string, Record<string, string> | string>;
      imports: Record<string, Record<string, string>>;
    };
    const main = pkg.exports["."] as Record<string, string>;
    for (const condition of ["workerd", "worker", "browser", "edge-light", "deno", "bun", "default"]) {
      assert.equal(main[condition], "./dist/edge.js", condition);
    }
    assert.equal(main.node, "./dist/index.js");
    // Order matters: a runtime takes the first condition it knows, and Bun and Deno also know "node".
    const keys = Object.keys(main);
    assert.ok(keys.indexOf("bun") < keys.indexOf("node") && keys.indexOf("deno") < keys.indexOf("node"));
    assert.equal(pkg.exports["./quickjs.wasm"], "./dist/quickjs.wasm");
    // The stripper likewise: a bundler that sets an edge condition and "node" still gets the one built
    // without Node detection; only Node itself (and Deno, Bun) gets the packages.
    for (const name of ["#typescript", "#ts-blank-space"]) {
      const map = pkg.imports[name]!;
      const order = Object.keys(map);
      for (const condition of ["workerd", "worker", "browser", "edge-light"]) {
        assert.equal(map[condition], "./dist/engines/lib/quickjs/stripper.js", `${name} ${condition}`);
        assert.ok(order.indexOf(condition) < order.indexOf("node"), `${name}: ${condition} before node`);
      }
      assert.equal(map.node, name.slice(1));
      assert.equal(map.default, "./dist/engines/lib/quickjs/stripper.js");
    }
  });

  for (const conditions of [["workerd", "worker", "browser"], ["browser"], ["edge-light", "browser"]]) {
    it(`bundling the edge entry with conditions ${conditions.join(",")} meets nothing Node-only`, async () => {
      ensureBuilt();
      const result = await build({
        entryPoints: [`${root}src/edge.ts`],
        bundle: true,
        write: false,
        metafile: true,
        format: "esm",
        platform: "browser",
        conditions,
        logLevel: "silent",
      });
      const inputs = Object.keys(result.metafile.inputs);
      assert.ok(inputs.some((f) => f.includes("src/engines/lib/quickjs/") || f.includes("dist/engines/lib/quickjs/")));
      // The MCP SDK is a dependency for `wasmcell mcp`, and Node-only (stdio, express): never in an edge bundle.
      const NODE_ONLY =
        /engines\/(pyodide|native)\/|engines\/registry\.node|^node:|jail\/|@modelcontextprotocol\/|adapters\/mcp\//;
      const nodeOnly = inputs.filter((f) => NODE_ONLY.test(f));
      assert.deepEqual(nodeOnly, []);
      // TypeScript comes from the stripper built without Node detection, never typescript.js itself
      // (which, under nodejs_compat, believes it is on Node and throws at load).
      assert.ok(inputs.includes("dist/engines/lib/quickjs/stripper.js"), inputs.join("\n"));
      assert.deepEqual(
        inputs.filter((f) => /node_modules\/(typescript|ts-blank-space)\//.test(f)),
        [],
      );
    });
  }

  it("the edge stripper strips exactly as the packages do on Node, and probes nothing of Node", async () => {
    ensureBuilt();
    const built = (await import(`${root}dist/engines/lib/quickjs/stripper.js`)) as {
      default: typeof TypeScript;
      blankSourceFile: typeof blankSourceFile;
    };
    const { default: tsBlankSpace } = await import("ts-blank-space");
    const samples = [
      "const n: number = 41;\nn + 1",
      "function f<T extends { a: string }>(x: T, y?: number): T { return x as T }\nf({ a: '' })",
      "import type { X } from './x';\nexport interface I { a: number }\nexport const v = (a satisfies I)!;",
      "class C { declare x: number; #p!: string; m(this: C): void {} }\ntype U = A | B;\nlet q = <const>1;",
    ];
    for (const code of samples) {
      const file = built.default.createSourceFile("main.ts", code, built.default.ScriptTarget.ESNext, false, 3);
      assert.equal(built.blankSourceFile(file), tsBlankSpace(code), code);
    }
    // The stripper's `ts.sys` is the one TypeScript builds when it finds no Node: none.
    assert.equal(built.default.sys, undefined);
  });
});
