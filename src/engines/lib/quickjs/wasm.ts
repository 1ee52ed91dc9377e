// How the QuickJS WebAssembly module is obtained. By default the variant package loads its own .wasm
// file (Node reads it from disk; a browser bundle fetches it next to the script). Where a runtime
// refuses to compile WebAssembly from bytes at run time (Cloudflare Workers, Vercel Edge), the host
// imports the compiled module itself (`import wasmModule from "wasmcell/quickjs.wasm"`) and passes it
// as `javascript.wasmModule`; every module instance (the live one, its spare, each replacement after a
// poisoning) is then instantiated from that one compiled module, and nothing is fetched or compiled.

import { newVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";

import { InvalidOptionError } from "../../../core/errors.ts";
import { isWasmModule } from "../../../options/index.ts";
import type { WasmModuleSource } from "../../../core/types.ts";
import { pinClockToUtc, WASM, type Imports } from "./clock.ts";

/** The emscripten hooks a module host installs (where aborts are printed). */
export interface EmscriptenHooks {
  printErr(text: string): void;
  print(text: string): void;
}

/** The QuickJS variant to instantiate: the release build, from `wasmModule` when one was given. */
export async function quickjsVariant(
  wasmModule: WasmModuleSource | undefined,
  hooks: EmscriptenHooks,
): Promise<QuickJSSyncVariant> {
  const base = releaseSync as unknown as QuickJSSyncVariant;
  let compiled: Promise<object>;
  if (wasmModule === undefined) compiled = defaultModule();
  else {
    const given: unknown = await Promise.resolve(wasmModule);
    if (!isWasmModule(given)) {
      throw new InvalidOptionError("javascript.wasmModule", "resolved to something that is not a WebAssembly.Module");
    }
    compiled = Promise.resolve(given as object);
  }
  // Emscripten hands the imports to this hook and instantiates nothing itself: the hook is where the
  // local-time imports are pinned to UTC (clock.ts), whichever way the module was obtained.
  const instantiateWasm = (imports: Imports, onSuccess: (instance: { exports: object }, module: object) => void) => {
    pinClockToUtc(imports);
    return compiled.then(async (module) => {
      const instance = await WASM.instantiate(module, imports);
      onSuccess(instance, module);
      return instance.exports;
    });
  };
  return newVariant(base, { emscriptenModule: { ...hooks, instantiateWasm } });
}

let defaultCompiled: Promise<object> | undefined;

/**
 * The variant's own .wasm file, compiled once per process (every module instance, spare and
 * replacement is instantiated from it). Read from disk where there is one (Node, Deno, Bun), else
 * fetched from beside the script, as the variant itself would.
 */
function defaultModule(): Promise<object> {
  defaultCompiled ??= (async () => {
    // No static node:fs import: this file is bundled for runtimes that have none.
    const host = globalThis as { process?: { getBuiltinModule?(id: string): unknown } };
    const fs = host.process?.getBuiltinModule?.("node:fs") as { readFileSync(url: URL): Uint8Array } | undefined;
    let url: URL | undefined;
    try {
      url = new URL(import.meta.resolve("@jitl/quickjs-wasmfile-release-sync/wasm"));
    } catch {
      url = undefined; // a bundle: the .wasm sits beside the script
    }
    if (fs && url?.protocol === "file:") return WASM.compile(fs.readFileSync(url));
    const response = await fetch(url ?? new URL("emscripten-module.wasm", import.meta.url));
    if (!response.ok) throw new Error(`QuickJS: fetching ${response.url} gave ${response.status}`);
    return WASM.compile(await response.arrayBuffer());
  })();
  defaultCompiled.catch(() => (defaultCompiled = undefined));
  return defaultCompiled;
}
