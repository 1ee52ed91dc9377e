// Starting `wasmcell mcp --http` replicas and an HAProxy in front of them, for the load and scale-out
// tests and the server benchmark. Everything binds loopback; HAProxy is the Debian package.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface Replica {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stderr: () => string;
}

/** Starts `wasmcell mcp --http` with `flags`, resolving once it prints its URL and /readyz answers 200. */
export async function startReplica(flags: string[], port = 0): Promise<Replica> {
  const child = spawn(process.execPath, [MAIN, "mcp", "--http", "--port", String(port), ...flags], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  for (;;) {
    const res = await fetch(url.replace("/mcp", "/readyz")).catch(() => undefined);
    if (res?.status === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child, exited, stderr: () => err };
}

/** A free loopback TCP port (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export const haproxyAvailable = (): boolean => spawnSync("haproxy", ["-v"], { stdio: "ignore" }).status === 0;

export interface Balancer {
  url: string;
  /** HAProxy's view of each backend server, from its stats socket: name -> UP / DOWN / … */
  status(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * HAProxy round-robin over `backends`, health-checking /healthz every 500 ms (down after 3 failures:
 * lenient, because on a loaded machine a busy replica can take a second to answer).
 * A request refused before anything ran (connection refused, or a 503 from a draining replica) is
 * retried on another replica; anything else goes back to the client, which decides.
 */
export async function startHaproxy(backends: string[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), "wasmcell-haproxy-"));
  const port = await freePort();
  const sock = join(dir, "stats.sock");
  const servers = backends.map((b, i) => {
    const u = new URL(b);
    return `  server r${i} ${u.hostname}:${u.port} check inter 500ms fall 3 rise 1`;
  });
  writeFileSync(
    join(dir, "haproxy.cfg"),
    [
      "global",
      `  stats socket ${sock} mode 600 level admin`,
      "  maxconn 2000",
      "defaults",
      "  mode http",
      "  timeout connect 1s",
      "  timeout check 3s",
      "  timeout client 60s",
      "  timeout server 60s",
      "  retries 2",
      "  option redispatch",
      "  option http-buffer-request",
      "  retry-on conn-failure 503",
      "frontend mcp",
      `  bind 127.0.0.1:${port}`,
      "  default_backend replicas",
      "backend replicas",
      "  balance roundrobin",
      "  option httpchk GET /healthz",
      "  http-check expect status 200",
      ...servers,
      "",
    ].join("\n"),
  );
  const child = spawn("haproxy", ["-db", "-f", join(dir, "haproxy.cfg")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; ; i++) {
    const res = await fetch(url.replace("/mcp", "/healthz")).catch(() => undefined);
    if (res?.status === 200) break;
    if (child.exitCode !== null || i > 200) throw new Error(`haproxy did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const status = async () => {
    const out = await new Promise<string>((resolve) => {
      let text = "";
      const c = connect(sock, () => c.end("show stat\n"));
      c.on("data", (d: Buffer) => (text += d.toString()));
      c.once("error", () => resolve(""));
      c.once("close", () => resolve(text));
    });
    const rows: Record<string, string> = {};
    for (const line of out.split("\n")) {
      const f = line.split(",");
      if (f[0] === "replicas" && f[1] && f[1] !== "BACKEND") rows[f[1]] = f[17] ?? "";
    }
    return rows;
  };
  // Ready once every backend has passed its health checks.
  while (!Object.values(await status()).every((s) => s === "UP")) await new Promise((r) => setTimeout(r, 50));
  return {
    url,
    status,
    close: async () => {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function connectClient(url: string, name = "load"): Promise<Client> {
  const client = new Client({ name, version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

export const BENIGN = (n: number) => `${n} * 7 + 1`;
export const HOSTILE = "while (true) {}";

export function resultText(r: unknown): string {
  return ((r as CallToolResult).content[0] as { text: string }).text;
}
