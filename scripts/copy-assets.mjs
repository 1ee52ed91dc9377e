/* global console, URL */
// `npm run build` step: tsc emits only JavaScript, but the Python engines ship Python files that run
// inside the jail (src/engines/lib/python/harness.py, src/engines/native/driver.py). Copy every .py
// under src/ to the same place under dist/. The QuickJS engine's WebAssembly is exported as
// `wasmcell/quickjs.wasm` (for hosts that import it as a module: Workers, Vercel Edge).
import { cpSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "src");
let copied = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith(".py")) continue;
  const from = join(entry.parentPath, entry.name);
  cpSync(from, join(root, "dist", relative(src, from)));
  copied++;
}
const wasm = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
cpSync(wasm, join(root, "dist", "quickjs.wasm"));
console.log(`copy-assets: ${copied} Python file(s) and quickjs.wasm copied to dist/`);
