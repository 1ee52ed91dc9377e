// The QuickJS module every worker thread instantiates, compiled once on the host.

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { InvalidOptionError } from "../../../core/errors.ts";
import { isWasmModule } from "../../../options/index.ts";
import type { WasmModuleSource } from "../../../core/types.ts";

/**
 * The compiled QuickJS module the workers instantiate: `javascript.wasmModule` when given (a module or
 * a promise of one), else the variant package's own .wasm compiled once here. A compiled module crosses
 * to a worker by structured clone without being compiled again.
 */
export async function compiledQuickJS(given: WasmModuleSource | undefined): Promise<WasmModuleSource> {
  if (given !== undefined) {
    const compiled: unknown = await Promise.resolve(given);
    if (!isWasmModule(compiled))
      throw new InvalidOptionError("javascript.wasmModule", "resolved to something that is not a WebAssembly.Module");
    return compiled as WasmModuleSource;
  }
  const file = fileURLToPath(import.meta.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
  const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModuleSource> } })
    .WebAssembly;
  return wasm.compile(await readFile(file));
}
