// `wasmcell setup`: installs the pinned package library and builds the Pyodide snapshot (src/setup/).
// Exit 0 when installed / up to date / --check passes, 1 when --check finds a problem; a download or
// checksum failure is a SetupError (exit 3) naming the package and both checksums.

import { parseArgs } from "node:util";
import { checkSetup, setup, type SetupProgress } from "../setup/index.ts";
import { UsageError, type Io } from "./usage.ts";

export async function setupCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      from: { type: "string" },
      "cache-dir": { type: "string" },
      lock: { type: "string" },
      check: { type: "boolean" },
      force: { type: "boolean" },
      "no-snapshot": { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  for (const flag of ["from", "cache-dir", "lock"] as const) {
    if (values[flag] === "") throw new UsageError(`--${flag} needs a path`);
  }
  const common = {
    ...(values["cache-dir"] ? { cacheDir: values["cache-dir"] } : {}),
    ...(values.lock ? { lockPath: values.lock } : {}),
    snapshot: !values["no-snapshot"],
  };
  if (values.check) {
    const result = checkSetup(common);
    if (values.json) io.stdout.write(`${JSON.stringify(result)}\n`);
    else if (result.ok)
      io.stdout.write(`wasmcell setup --check: ok — ${result.manifest!.files.count} files verified in ${result.dir}\n`);
    else
      io.stdout.write(
        `wasmcell setup --check: ${result.problems.length} problem(s)\n  ${result.problems.join("\n  ")}\n`,
      );
    return result.ok ? 0 : 1;
  }
  const bar = progressBar(io);
  const result = await setup({
    ...common,
    ...(values.from ? { from: values.from } : {}),
    ...(values.force ? { force: true } : {}),
    onProgress: (p) => bar.update(p),
  });
  bar.end();
  if (values.json) {
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  }
  const m = result.manifest;
  const what = `${m.packages.length} packages, ${m.files.count} files, ${(m.files.bytes / 1e6).toFixed(1)} MB`;
  io.stdout.write(
    result.status === "up-to-date"
      ? `wasmcell setup: up to date (${what}) in ${result.dir}\n`
      : `wasmcell setup: installed ${what} into ${result.dir} in ${(result.ms / 1000).toFixed(1)} s` +
          (result.snapshotPath ? `; snapshot ${result.snapshotPath}` : "") +
          "\n",
  );
  return 0;
}

/** One redrawn line on a terminal; a line per step otherwise (logs stay readable). */
function progressBar(io: Io): { update(p: SetupProgress): void; end(): void } {
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  let lastStep = "";
  let drawn = false;
  return {
    update(p) {
      if (p.step === "done") return;
      if (p.step === "evict") {
        // A removal is said on a line of its own, not drawn over by the next step.
        io.stderr.write(`${drawn ? "\r\x1b[2K" : ""}wasmcell setup: ${p.detail}\n`);
        drawn = false;
        return;
      }
      if (tty) {
        const width = 24;
        const filled = p.total > 0 ? Math.round((p.done / p.total) * width) : 0;
        const line = `${p.step.padEnd(8)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${p.total} ${p.detail}`;
        io.stderr.write(`\r\x1b[2K${line.slice(0, 100)}`);
        drawn = true;
      } else if (p.step !== lastStep) {
        io.stderr.write(`wasmcell setup: ${p.step}: ${p.detail}\n`);
      }
      lastStep = p.step;
    },
    end() {
      if (drawn) io.stderr.write("\r\x1b[2K");
    },
  };
}
