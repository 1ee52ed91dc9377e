// Runs a script with the test's own Node (the pinned one) as a child process and collects its output.
import { spawn } from "node:child_process";

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runNode(
  args: string[],
  options: { stdin?: string; cwd?: string; env?: NodeJS.ProcessEnv; via?: string[] } = {},
): Promise<Ran> {
  // `via`: a command that starts Node (setpriv, prlimit, …), given Node's path and `args` after its own.
  const [command, ...argv] = [...(options.via ?? []), process.execPath, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, argv, {
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}
