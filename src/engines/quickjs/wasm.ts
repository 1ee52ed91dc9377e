// How the QuickJS WebAssembly module is obtained. By default the variant package loads its own .wasm
// file (Node reads it from disk; a browser bundle fetches it next to the script). Where a runtime
// refuses to compile WebAssembly from bytes at run time (Cloudflare Workers, Vercel Edge), the host
// imports the compiled module itself (`import wasmModule from "wasmcell/quickjs.wasm"`) and passes it
// as `javascript.wasmModule`; every module instance (the live one, its spare, each replacement after a
// poisoning) is then instantiated from that one compiled module, and nothing is fetched or compiled.

import { newVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";

import { InvalidOptionError } from "../../errors.ts";
import { isWasmModule } from "../../options.ts";
import type { WasmModuleSource } from "../../types.ts";

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
  if (wasmModule === undefined) return newVariant(base, { emscriptenModule: hooks as never });
  const compiled: unknown = await Promise.resolve(wasmModule);
  if (!isWasmModule(compiled)) {
    throw new InvalidOptionError("javascript.wasmModule", "resolved to something that is not a WebAssembly.Module");
  }
  return newVariant(base, { wasmModule: compiled as never, emscriptenModule: hooks as never });
}
