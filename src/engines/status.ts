// What `wasmcell doctor` says about one engine: available or not, and why.

import type { EngineName } from "../core/types.ts";

export interface EngineStatus {
  engine: EngineName;
  available: boolean;
  detail: string;
}

/** An engine that is an npm package away: available when the package resolves from here. */
export function packageStatus(engine: EngineName, pkg: string): EngineStatus {
  try {
    import.meta.resolve(pkg);
    return { engine, available: true, detail: `${pkg} is installed` };
  } catch {
    return { engine, available: false, detail: `the ${pkg} package is not installed` };
  }
}
