// A Cloudflare Worker that runs the code an agent writes, in QuickJS-in-WebAssembly inside the Worker.
// POST a run_code tool call — {"language":"javascript"|"typescript","code":"..."} — and get back the
// text to hand the model: the value, output, or an error it can act on. Every run starts fresh, with a
// deadline and a memory cap, and nothing to reach but what you pass in.
import { createSandbox } from "wasmcell";
import { createToolkit } from "wasmcell/tools";
// Workers refuse to compile WebAssembly at run time: import the engine as a compiled module.
import wasmModule from "wasmcell/quickjs.wasm";

let toolkit;

function getToolkit() {
  // One sandbox per Worker isolate, created on the first request and reused by later ones.
  toolkit ??= createSandbox({ javascript: { wasmModule }, limits: { timeoutMs: 1000, memoryMb: 32 } }).then((sandbox) =>
    createToolkit({ sandbox, languages: ["javascript", "typescript"] }),
  );
  return toolkit;
}

export default {
  async fetch(request) {
    if (request.method !== "POST") {
      return new Response('POST {"language":"javascript","code":"1 + 1"}\n', { status: 405 });
    }
    const kit = await getToolkit();
    const output = await kit.callTool("run_code", await request.text());
    // A failed run is still a good answer for the model: the text says what went wrong.
    return new Response(output.text, { headers: { "content-type": "text/plain; charset=utf-8" } });
  },
};
