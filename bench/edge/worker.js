// The edge bench's Worker (bench/edge.ts runs it in workerd through miniflare): GET /?n=N&code=C runs
// the snippet C N times back to back through the built edge package and answers when they are done. The
// Worker does not time anything: workerd's clocks stand still while a request computes (they move
// only on I/O), so the host times the whole request.
import { createSandbox } from "wasmcell";
import wasmModule from "wasmcell/quickjs.wasm";

let sandbox;

export default {
  async fetch(request) {
    const params = new URL(request.url).searchParams;
    const n = Number(params.get("n") ?? "1");
    const code = params.get("code") ?? "";
    sandbox ??= createSandbox({ javascript: { wasmModule } });
    const s = await sandbox;
    for (let i = 0; i < n; i++) {
      const r = await s.run({ language: "javascript", code });
      if (!r.ok) return new Response(JSON.stringify(r), { status: 500 });
    }
    return new Response(String(n));
  },
};
