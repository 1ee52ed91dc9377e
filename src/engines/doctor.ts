// `wasmcell doctor`: the seal layers this machine supports (asked of the jail) and each engine's own
// answer about whether it can run here (asked of the engine). Returns data; the CLI prints it.

import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal } from "../options.ts";
import { sealReport, type HostTools, type SealReport } from "../jail/index.ts";
import { nativeStatus } from "./native/doctor.ts";
import { packageStatus, type EngineStatus } from "./status.ts";

export type { EngineStatus } from "./status.ts";

export interface DoctorReport extends SealReport {
  engines: EngineStatus[];
}

export interface DoctorOptions {
  seal?: ResolvedSeal;
  /** @internal Host tool paths, for tests that make one missing. */
  tools?: Partial<HostTools>;
  /** @internal The native tier's python3, for tests. */
  python?: string;
}

export async function doctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const seal = options.seal ?? RESOLVED_DEFAULT_SEAL;
  const tools = options.tools ?? {};
  const report = await sealReport({ seal, tools });
  const engines: EngineStatus[] = [
    packageStatus("quickjs", "quickjs-emscripten-core"),
    packageStatus("pyodide", "pyodide"),
    await nativeStatus(seal, tools, options.python),
  ];
  return { ...report, engines };
}
