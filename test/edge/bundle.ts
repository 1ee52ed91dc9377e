// Bundles an example the way a runtime's own tooling does (wrangler, Vercel, a browser build): esbuild
// with that runtime's export conditions. `wasmcell` and its subpaths resolve through package.json's
// exports (the edge entry) to this checkout's sources — or, for the edge bench, to the built files in
// dist/ (what a user's bundler meets); the engine's `.wasm` stays a separate module, as wrangler and
// Vercel keep it. Either way the TypeScript stripper is the built one: package.json's `#typescript`
// import sends these conditions to dist/engines/lib/quickjs/stripper.js, so bundling builds first if needed.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { ensureBuilt } from "./build.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
  exports: Record<string, string | Record<string, string>>;
};

/** The engine's compiled-module bytes, as `wasmcell/quickjs.wasm` exports them. */
export const QUICKJS_WASM = readFileSync(
  createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm"),
);

const fromCheckout = (from: "src" | "dist"): Plugin => ({
  name: "wasmcell-from-checkout",
  setup(b) {
    b.onResolve({ filter: /^wasmcell(\/.*)?$/ }, (args) => {
      if (args.path === "wasmcell/quickjs.wasm") return { path: "./quickjs.wasm", external: true };
      const entry = pkg.exports[args.path === "wasmcell" ? "." : `.${args.path.slice("wasmcell".length)}`];
      const target = typeof entry === "string" ? entry : entry?.default;
      if (!target) return { errors: [{ text: `${args.path} is not exported by package.json` }] };
      if (from === "dist") return { path: `${root}${target.slice(2)}` };
      return { path: `${root}${target.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")}` };
    });
  },
});

/** One ES module (the bundle) that imports `./quickjs.wasm` if the example does. */
export async function bundle(
  entry: string,
  conditions: string[],
  format: "esm" | "iife" = "esm",
  from: "src" | "dist" = "src",
): Promise<string> {
  ensureBuilt();
  const result = await build({
    entryPoints: [fileURLToPath(new URL(`../../${entry}`, import.meta.url))],
    bundle: true,
    write: false,
    format,
    platform: "browser",
    conditions,
    minify: true,
    plugins: [fromCheckout(from)],
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}
