import { QuickJSEngine } from "./src/engines/quickjs/index.ts";
import { resolveOptions, resolveRequest } from "./src/options.ts";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-wasmfile-release-sync";
const mod = await newQuickJSWASMModuleFromVariant(variant as any);
const eng = new QuickJSEngine(); await eng.warm(); const opts = resolveOptions({});
const code = process.argv[2] ?? "1+2";
const req = resolveRequest({ language: "javascript", code }, opts);
async function engineLoop(n: number) { for (let i = 0; i < n; i++) await eng.run(req); }
function seedLoop(n: number) { for (let i = 0; i < n; i++) { const rt = mod.newRuntime(); rt.setMemoryLimit(128<<20); const c = rt.newContext(); const r = c.evalCode(code); c.dump(r.value!); r.value!.dispose(); c.dispose(); rt.dispose(); } }
for (let k = 0; k < 3; k++) {
  let t = performance.now(); await engineLoop(5000); const e = performance.now() - t;
  t = performance.now(); seedLoop(5000); const s = performance.now() - t;
  console.log("engine µs/run", (e / 5).toFixed(0), "seed µs/run", (s / 5).toFixed(0));
}
await eng.close();
