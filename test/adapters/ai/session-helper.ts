// A sandbox session over a real sandbox, for tests of its built-in commands: `sh(command)` runs one
// command line and returns exit code, stdout and stderr. The built-ins start no engine run.
import { createSandboxSession, type SandboxSessionOptions } from "../../../src/adapters/ai/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";

export interface Shell {
  sandbox: Sandbox;
  session: ReturnType<typeof createSandboxSession>;
  sh: (command: string, workingDirectory?: string) => Promise<{ exitCode: number; stdout: string; stderr: string }>;
}

export async function openShell(options: Omit<SandboxSessionOptions, "sandbox"> = {}): Promise<Shell> {
  const sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  const session = createSandboxSession({ sandbox, limits: { timeoutMs: 20_000 }, ...options });
  return {
    sandbox,
    session,
    sh: async (command, workingDirectory) =>
      await session.run(workingDirectory === undefined ? { command } : { command, workingDirectory }),
  };
}
