// Local HTTP servers for the network tests (this machine may only reach 127.0.0.0/8). Each server
// records every request it sees, so "never reached" is observed from the host, not assumed.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Server as NetServer } from "node:net";
import { join } from "node:path";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface TestServer {
  port: number;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  requests: SeenRequest[];
  close: () => Promise<void>;
}

/**
 * Routes: `/hello` → "hello"; `/echo` → the request as JSON; `/redirect?to=URL&status=302`;
 * `/bytes?n=N` → N bytes of "x"; `/slow` → headers, then nothing; anything else → 404.
 */
export async function startHttpServer(): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      requests.push(seen);
      const url = new URL(req.url ?? "/", "http://x");
      switch (url.pathname) {
        case "/hello":
          res.setHeader("content-type", "text/plain");
          res.end("hello");
          return;
        case "/echo":
          res.setHeader("content-type", "application/json");
          res.setHeader("x-reply", "yes");
          res.end(JSON.stringify(seen));
          return;
        case "/redirect":
          res.statusCode = Number(url.searchParams.get("status") ?? 302);
          res.setHeader("location", url.searchParams.get("to") ?? "/hello");
          res.end();
          return;
        case "/bytes":
          res.end("x".repeat(Number(url.searchParams.get("n") ?? 0)));
          return;
        case "/slow":
          res.writeHead(200, { "content-type": "text/plain" });
          res.write("start");
          return; // never ends
        default:
          res.statusCode = 404;
          res.end("not found");
      }
    });
  });
  const port = await listenLoopback(server);
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Listens on a free port of 127.0.0.1: the port. */
export async function listenLoopback(server: Pick<NetServer, "listen" | "address">): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** A resolver that answers from a table (names the test makes up), and fails for the rest. */
export function tableResolver(table: Record<string, string[] | (() => string[])>) {
  const calls: string[] = [];
  const resolve = (host: string): Promise<string[]> => {
    calls.push(host);
    const entry = table[host];
    if (!entry) return Promise.reject(new Error(`ENOTFOUND ${host}`));
    return Promise.resolve(typeof entry === "function" ? entry() : entry);
  };
  return { resolve, calls };
}

/**
 * A self-signed certificate for 127.0.0.1 made with openssl for this test run (in `dir`), and an
 * HTTPS server on loopback using it; the certificate doubles as the CA a client verifies against.
 */
export async function startTlsServer(
  dir: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ ca: Buffer; port: number; close: () => Promise<void> }> {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { stdio: "ignore" },
  );
  const ca = readFileSync(cert);
  const server = createHttpsServer({ key: readFileSync(key), cert: ca }, handler);
  return {
    ca,
    port: await listenLoopback(server),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
