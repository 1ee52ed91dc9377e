// Host-side witnesses for security tests: things a guest must not be able to touch. Each one is
// checked from the host after the run, so "untouched" is observed, not assumed.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:net";

/** A TCP listener on 127.0.0.1 that counts connections. */
export async function startListener(): Promise<{
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { port: address.port, connections: () => count, close: () => new Promise((r) => server.close(() => r())) };
}

/** A host process a guest might try to signal. */
export function startVictim(): { pid: number; alive: () => boolean; stop: () => void } {
  const child: ChildProcess = spawn("/bin/sleep", ["60"], { stdio: "ignore" });
  return {
    pid: child.pid!,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: () => child.kill("SIGKILL"),
  };
}

/** A name no host file has yet. */
export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(6).toString("hex")}`;
