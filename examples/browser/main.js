// The page's script: one sandbox for the tab, a run per click. The engine's WebAssembly is fetched and
// compiled by the page (compileStreaming needs the file served as application/wasm) and handed in.
import { createSandbox } from "wasmcell";

const wasmModule = WebAssembly.compileStreaming(fetch(new URL("./quickjs.wasm", document.baseURI)));
const sandbox = await createSandbox({ javascript: { wasmModule }, limits: { timeoutMs: 1000, memoryMb: 32 } });

const $ = (id) => document.getElementById(id);
$("run").addEventListener("click", async () => {
  const r = await sandbox.run({ language: $("language").value, code: $("code").value });
  const shown = r.ok ? `value: ${JSON.stringify(r.value)}` : `error: ${r.error.kind}: ${r.error.message}`;
  $("output").textContent = `${r.stdout}${shown}`;
});
$("run").disabled = false;
