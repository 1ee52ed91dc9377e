// What the CLI says on stderr about the sandbox's own events: a first run without `wasmcell setup`
// is never a silent wait. (--json keeps stdout to one JSON object; these lines go to stderr.)

import type { SandboxEvent } from "../types.ts";
import type { Io } from "./usage.ts";

export function cliEvents(io: Io): (event: SandboxEvent) => void {
  return (event) => {
    if (event.type === "engine.building") {
      io.stderr.write(
        "wasmcell: the Python engine snapshot is not built on this machine, so this run starts a cold " +
          "interpreter (a few seconds). `wasmcell setup` builds it once " +
          `(about ${Math.round(event.estimateMs / 1000)} s) and makes every later start fast.\n`,
      );
    } else if (event.type === "packages.missing") {
      io.stderr.write(`wasmcell: ${event.message}\n`);
    }
  };
}
