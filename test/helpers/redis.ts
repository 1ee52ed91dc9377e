// A real redis-server for the queue and session-store tests: loopback, a random free port, a fresh
// temp dir, persistence off, and stopped by the test that started it (CI installs Debian's package).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./mcp-http.ts";

export interface RedisServer {
  /** redis://127.0.0.1:PORT */
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export const redisAvailable = (): boolean => spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

/** Starts redis-server (on `port`, or a free one) and resolves once it answers PING (bounded: 10 s). */
export async function startRedis(port?: number): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-redis-"));
  port ??= await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (let i = 0; !(await ping(port)); i++) {
    if (child.exitCode !== null || i > 200) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.setTimeout(500, () => socket.destroy());
    socket.once("data", (d: Buffer) => {
      socket.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
    socket.once("error", () => resolve(false));
    socket.once("close", () => resolve(false));
  });
}
