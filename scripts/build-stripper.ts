// `npm run build` step: the TypeScript type stripper for every runtime that is not Node (Workers,
// browsers, Vercel Edge), as one ES module, dist/engines/lib/quickjs/stripper.js. package.json's `imports`
// (`#typescript`, `#ts-blank-space`) sends those runtimes here and Node to the packages themselves.
//
// Why not the `typescript` package as it is: typescript.js decides at load whether it runs on Node
// (`typeof process`, `process.nextTick`, `typeof require`) and, if so, builds `ts.sys` from `require("fs")`,
// `"os"`, `"path"`, `"crypto"`, `__filename`. Workers with nodejs_compat (the default from compatibility
// date 2026-08-04) pass that test, so loading the parser throws (`_os.platform is not a function`,
// `__filename is not defined`); with `no_nodejs_compat` the bundler leaves the `node:` imports in and
// the Worker does not start. Here those names are replaced at build time: `process`, `__filename` and
// `__dirname` are `undefined` in this module only (the host's globals are not touched), so the Node test
// folds to false, and each Node built-in it names is an empty module, so no bundler sees one. The parser
// itself is TypeScript's own code, unchanged: it strips exactly what it strips on Node.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "dist", "engines", "lib", "quickjs", "stripper.js");
const require = createRequire(import.meta.url);
const version = (name: string): string =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version: string }).version;

const builtins = new RegExp(`^(node:)?(${builtinModules.join("|").replaceAll("/", "\\/")})$`);
const result = await build({
  stdin: {
    contents: 'export { default } from "typescript";\nexport { blankSourceFile } from "ts-blank-space";\n',
    resolveDir: root,
  },
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  mainFields: ["module", "main"],
  minify: true,
  define: { process: "undefined", __filename: "undefined", __dirname: "undefined" },
  banner: {
    js:
      `// typescript ${version("typescript")} (Apache-2.0, Microsoft) and ts-blank-space ${version("ts-blank-space")} ` +
      "(Apache-2.0, Bloomberg), bundled by scripts/build-stripper.ts with Node detection removed.",
  },
  plugins: [
    {
      name: "no-node-builtins",
      setup(b) {
        b.onResolve({ filter: builtins }, (args) => ({ path: args.path, namespace: "node-builtin" }));
        b.onLoad({ filter: /.*/, namespace: "node-builtin" }, () => ({ contents: "export default {};" }));
      },
    },
  ],
  logLevel: "warning",
});
const code = result.outputFiles[0]!.text;
// What the bundle must not contain: a Node built-in import a Worker bundler would keep, or the Node test.
const leftover = code.match(/\brequire\(\s*["'](node:)?(fs|os|path|crypto|perf_hooks|inspector)["']|process\.nextTick/);
if (leftover) {
  console.error(`build-stripper: the stripper bundle still names Node: ${leftover[0]}`);
  process.exit(1);
}
mkdirSync(join(root, "dist", "engines", "lib", "quickjs"), { recursive: true });
writeFileSync(out, code);
console.log(`build-stripper: ${(code.length / 1e6).toFixed(2)} MB written to dist/engines/lib/quickjs/stripper.js`);
