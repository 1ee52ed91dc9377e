// `wasmcell doctor`: prints which engines and seal layers this machine supports (the report comes from
// src/engines/doctor.ts, which asks the jail and each engine and runs real checks). Exit 0 when every engine is available, 1 otherwise, so
// a setup script can gate on it.

import { parseArgs } from "node:util";
import { doctor, type DoctorReport } from "../engines/doctor.ts";
import { UsageError, type Io } from "./usage.ts";

export async function doctorCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { json: { type: "boolean" } },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const report = await doctor();
  if (values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
  else io.stdout.write(formatDoctor(report));
  return report.engines.every((e) => e.available) ? 0 : 1;
}

function formatDoctor(report: DoctorReport): string {
  const mark = (s: { available: boolean }) => (s.available ? "ok  " : "no  ");
  const width = Math.max(...report.layers.map((l) => l.layer.length), ...report.engines.map((e) => e.engine.length));
  return [
    `wasmcell doctor — ${report.platform}/${report.arch}, Node ${report.node}${report.root ? ", running as root" : ""}`,
    "",
    "engines:",
    ...report.engines.map((e) => `  ${mark(e)}${e.engine.padEnd(width)}  ${e.detail}`),
    "",
    "seal layers:",
    ...report.layers.map((l) => `  ${mark(l)}${l.layer.padEnd(width)}  ${l.detail}`),
    "",
    "python packages:",
    `  ${mark({ available: report.packages.installed && report.packages.snapshot })}${"library".padEnd(width)}  ${report.packages.detail}`,
    "",
    "runtime files (for the jail's uid):",
    `  ${mark(report.staging)}${"staging".padEnd(width)}  ${report.staging.detail}`,
    "",
  ].join("\n");
}
