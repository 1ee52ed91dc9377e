// Shared by the jail tests: run a snippet of Debian python3 in the jail and collect what it printed.
import { pythonJailSpec, pythonLayout } from "../../src/engines/native/binds.ts";
import { spawnJailed, type JailExit, type JailSpec, type JailedProcess } from "../../src/jail/index.ts";
import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal } from "../../src/options/index.ts";

export const layout = pythonLayout("/usr/bin/python3");

/** Seal for tests: everything on, seccomp in the kill mode so a missing allowlist entry shows up. */
export const TEST_SEAL: ResolvedSeal = { ...RESOLVED_DEFAULT_SEAL, seccomp: "kill" };

export function pythonSpec(code: string, overrides: Partial<JailSpec> = {}): JailSpec {
  return { ...pythonJailSpec(layout, ["-I", "-c", code], TEST_SEAL), wallClockMs: 30_000, ...overrides };
}

export interface Collected extends JailExit {
  stdout: string;
  stderr: string;
}

export async function collect(jail: JailedProcess, stdin?: string): Promise<Collected> {
  let stdout = "";
  let stderr = "";
  jail.child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  jail.child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const ended = (s: NodeJS.ReadableStream) => new Promise((r) => s.once("close", r));
  const streams = Promise.all([ended(jail.child.stdout), ended(jail.child.stderr)]);
  jail.child.stdin.end(stdin ?? "");
  const exit = await jail.exited;
  await streams;
  return { ...exit, stdout, stderr };
}

export async function runPython(code: string, overrides: Partial<JailSpec> = {}): Promise<Collected> {
  return collect(await spawnJailed(pythonSpec(code, overrides)));
}
