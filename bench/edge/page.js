// The edge bench's page script (bench/edge.ts opens it in headless Chromium): `benchBatch(n, code)` runs
// the snippet n times back to back through the built edge package and returns the batch's milliseconds.
// Chromium coarsens performance.now (to 100 µs on a page that is not cross-origin isolated), so only a
// whole batch is timed, never one run.
import { createSandbox } from "wasmcell";

const wasmModule = WebAssembly.compileStreaming(fetch(new URL("./quickjs.wasm", document.baseURI)));
const sandbox = await createSandbox({ javascript: { wasmModule } });

globalThis.benchBatch = async (n, code) => {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await sandbox.run({ language: "javascript", code });
    if (!r.ok) throw new Error(`benchmark run failed: ${JSON.stringify(r)}`);
  }
  return performance.now() - start;
};
globalThis.benchReady = true;
