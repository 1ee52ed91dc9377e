// wasmcell on Deno (npm:wasmcell, or wasmcell in package.json). This example runs TypeScript, so:
//   deno run --allow-read --allow-env="TSC_*,NODE_ENV,NODE_INSPECTOR_IPC,VSCODE_INSPECTOR_OPTIONS" main.js
// --allow-read lets the engine read its own .wasm file from node_modules (JavaScript alone needs only
// that); --allow-env names the variables the TypeScript parser reads when it loads. Nothing else: no
// --allow-net, --allow-run or --allow-write. Deno takes the package's JavaScript-only build (the
// `deno` export condition): JavaScript and TypeScript run here, Python needs Node.js.
import { createSandbox } from "wasmcell";

const sandbox = await createSandbox({ limits: { timeoutMs: 1000 } });
try {
  const ts = await sandbox.run({
    language: "typescript",
    code: "const xs: number[] = [1, 2, 3];\nxs.map((x) => x * 2)",
  });
  console.log("typescript:", ts.ok ? JSON.stringify(ts.value) : ts.error.message);
  const slow = await sandbox.run({ language: "javascript", code: "while (true) {}" });
  console.log("timeout:", slow.ok ? "no" : slow.error.kind);
  const py = await sandbox.run({ language: "python", code: "1 + 1" });
  console.log("python:", py.ok ? "ran" : py.error.kind);
} finally {
  await sandbox.close();
}
