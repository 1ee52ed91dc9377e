// The native tier's host proxy on its own: forward requests and CONNECT tunnels through a unix
// socket, each one decided by the run's RunNetwork, against local HTTP and TLS servers.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import type { SandboxEvent } from "../../src/core/events.ts";
import { parseAllowEntry } from "../../src/network/allowlist.ts";
import { Deadline } from "../../src/kit/deadline.ts";
import { RunNetwork } from "../../src/network/run-network.ts";
import type { NetworkPolicy } from "../../src/network/policy.ts";
import { NetworkProxy, parseAuthority } from "../../src/network/proxy.ts";
import { startHttpServer, startTlsServer, type TestServer } from "../helpers/http.ts";

let dir: string;
let allowed: TestServer;
let forbidden: TestServer;
let closeTls: () => Promise<void>;
let tlsPort: number;
let tlsHits = 0;
let ca: Buffer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "wasmcell-proxy-test-"));
  const server = await startTlsServer(dir, (req, res) => {
    tlsHits++;
    if (req.url === "/big") res.end("y".repeat(200_000));
    else if (req.url === "/slow") res.write("start");
    else res.end(`tls hello ${String(req.headers["x-api-key"] ?? "no key")}`);
  });
  ({ ca, port: tlsPort, close: closeTls } = server);
  allowed = await startHttpServer();
  forbidden = await startHttpServer();
});
after(async () => {
  await closeTls();
  await allowed.close();
  await forbidden.close();
  rmSync(dir, { recursive: true, force: true });
});

const policy = (over: Partial<NetworkPolicy> = {}): NetworkPolicy => ({
  rules: [
    parseAllowEntry({ host: `127.0.0.1:${allowed.port}`, headers: { "x-api-key": "secret" } }),
    parseAllowEntry(`127.0.0.1:${tlsPort}`),
  ],
  maxRequests: 10,
  maxRequestBytes: 1024,
  maxResponseBytes: 100_000,
  maxTotalBytes: 1_000_000,
  timeoutMs: 5_000,
  maxRedirects: 5,
  methods: undefined,
  resolve: undefined,
  ...over,
});

let n = 0;
/** A proxy on a fresh socket with a run attached (`network: false`: a run without network). */
async function proxyFor(p: NetworkPolicy | false) {
  const events: SandboxEvent[] = [];
  const emit = (e: object) => events.push({ time: Date.now(), ...e } as SandboxEvent);
  const network = p ? new RunNetwork(p, { engine: "native", deadline: new Deadline(30_000), emit }) : undefined;
  const proxy = await NetworkProxy.listen(join(dir, `p${n++}.sock`));
  proxy.attach({ network, engine: "native", emit });
  return { proxy, network, events, close: () => (network?.close(), proxy.close()) };
}

/** A forward request through the proxy: status, reason phrase, body. */
function forward(path: string, url: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; reason: string; body: string }>((resolve, reject) => {
    const req = http.request({ socketPath: path, path: url, method: body ? "POST" : "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          reason: res.statusMessage ?? "",
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** CONNECT through the proxy: the status line, and the socket when it was established. */
function connect(path: string, authority: string) {
  return new Promise<{ status: number; reason: string; socket: Duplex }>((resolve, reject) => {
    const req = http.request({ socketPath: path, method: "CONNECT", path: authority });
    req.on("connect", (res, socket) =>
      resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? "", socket }),
    );
    req.on("error", reject);
    req.end();
  });
}

/** An HTTPS GET over an established tunnel, verifying the test's own CA. */
function tlsGet(socket: Duplex, path: string) {
  return new Promise<string>((resolve, reject) => {
    const secure = tls.connect({ socket, ca, servername: undefined, host: "127.0.0.1" }, () => {
      secure.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    secure.on("data", (c: Buffer) => chunks.push(c));
    secure.on("end", () => resolve(Buffer.concat(chunks).toString()));
    secure.on("close", () => resolve(Buffer.concat(chunks).toString()));
    secure.on("error", reject);
  });
}

describe("network proxy (native tier)", () => {
  it("parses CONNECT authorities strictly", () => {
    assert.deepEqual(parseAuthority("Example.COM:443"), { host: "example.com", port: 443 });
    assert.deepEqual(parseAuthority("[::1]:8443"), { host: "::1", port: 8443 });
    for (const bad of ["example.com", "a:b", "user@host:1", "host:99999", "/x:1", "h:1/x", ""])
      assert.equal(parseAuthority(bad), undefined, bad);
  });

  it("forwards an allowed request, injects the entry's header, drops the guest's proxy headers", async () => {
    const p = await proxyFor(policy());
    const r = await forward(p.proxy.path, `${allowed.origin}/echo`, {
      "proxy-authorization": "Basic x",
      "x-mine": "1",
    });
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.body) as { headers: Record<string, string> };
    assert.equal(seen.headers["x-api-key"], "secret");
    assert.equal(seen.headers["x-mine"], "1");
    assert.equal(seen.headers["proxy-authorization"], undefined);
    assert.ok(p.events.some((e) => e.type === "egress" && e.allowed && e.port === allowed.port));
    await p.close();
  });

  it("refuses a host not in the allowlist with a 403 that names it and why", async () => {
    const p = await proxyFor(policy());
    const before = forbidden.requests.length;
    const r = await forward(p.proxy.path, `${forbidden.origin}/hello`);
    const why = `network: 127.0.0.1:${forbidden.port} refused: not in the allowlist`;
    assert.deepEqual(r, { status: 403, reason: why, body: `${why}\n` });
    assert.equal(forbidden.requests.length, before);
    assert.ok(p.events.some((e) => e.type === "egress" && !e.allowed && e.reason === "not-allowed"));
    await p.close();
  });

  it("refuses a request body over maxRequestBytes before anything is sent upstream", async () => {
    const p = await proxyFor(policy());
    const before = allowed.requests.length;
    const r = await forward(p.proxy.path, `${allowed.origin}/echo`, {}, "z".repeat(5000));
    assert.equal(r.status, 403);
    assert.match(r.reason, /over the 1024-byte cap \(network\.maxRequestBytes\)/);
    assert.equal(allowed.requests.length, before);
    await p.close();
  });

  it("takes absolute URLs only, and refuses everything for a run without network", async () => {
    const p = await proxyFor(policy());
    assert.equal((await forward(p.proxy.path, "/hello")).status, 400);
    await p.close();
    const none = await proxyFor(false);
    const r = await forward(none.proxy.path, `${allowed.origin}/hello`);
    assert.equal(r.status, 403);
    assert.equal(r.reason, "network: this run has no network (the network option)");
    assert.equal((await connect(none.proxy.path, `127.0.0.1:${tlsPort}`)).status, 403);
    assert.equal(none.events.filter((e) => e.type === "egress" && e.reason === "no-network").length, 2);
    await none.close();
  });

  it("tunnels TLS by CONNECT to an allowed host:port, end to end with the real server", async () => {
    const p = await proxyFor(policy());
    const t = await connect(p.proxy.path, `127.0.0.1:${tlsPort}`);
    assert.equal(t.status, 200);
    const answer = await tlsGet(t.socket, "/");
    // The header injection is for plain HTTP only: the host cannot write into the guest's TLS.
    assert.match(answer, /^HTTP\/1\.1 200[\s\S]*tls hello no key$/);
    await new Promise((r) => setTimeout(r, 50));
    const egress = p.events.find((e) => e.type === "egress" && e.method === "CONNECT");
    assert.ok(egress?.type === "egress" && egress.allowed && egress.bytesReceived > 0 && egress.bytesSent > 0);
    await p.close();
  });

  it("refuses a CONNECT to a host:port not in the allowlist, and any CONNECT when methods are set", async () => {
    const p = await proxyFor(policy());
    const hits = tlsHits;
    const denied = await connect(p.proxy.path, `127.0.0.1:${forbidden.port}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.reason, `network: 127.0.0.1:${forbidden.port} refused: not in the allowlist`);
    await p.close();
    const m = await proxyFor(policy({ methods: ["GET"] }));
    const r = await connect(m.proxy.path, `127.0.0.1:${tlsPort}`);
    assert.equal(r.status, 403);
    assert.match(r.reason, /network\.methods is set/);
    assert.equal(tlsHits, hits);
    assert.equal(forbidden.requests.length, 0);
    await m.close();
  });

  it("holds the caps: requests per run, bytes through a tunnel, time", async () => {
    const p = await proxyFor(policy({ maxRequests: 1 }));
    assert.equal((await forward(p.proxy.path, `${allowed.origin}/hello`)).status, 200);
    const second = await forward(p.proxy.path, `${allowed.origin}/hello`);
    assert.equal(second.status, 403);
    assert.match(second.reason, /network\.maxRequests/);
    assert.equal((await connect(p.proxy.path, `127.0.0.1:${tlsPort}`)).status, 403);
    await p.close();

    const b = await proxyFor(policy({ maxResponseBytes: 50_000 }));
    const t = await connect(b.proxy.path, `127.0.0.1:${tlsPort}`);
    const got = await tlsGet(t.socket, "/big").catch(() => "cut");
    assert.ok(got === "cut" || got.length < 50_000, "the tunnel ends at the cap");
    assert.ok(b.events.some((e) => e.type === "limit" && e.limit === "network.maxResponseBytes"));
    await b.close();

    const s = await proxyFor(policy({ timeoutMs: 300 }));
    const slow = await connect(s.proxy.path, `127.0.0.1:${tlsPort}`);
    await tlsGet(slow.socket, "/slow").catch(() => "cut");
    assert.ok(s.events.some((e) => e.type === "limit" && e.limit === "network.timeoutMs"));
    const cut = await forward(s.proxy.path, `${allowed.origin}/slow`).catch(() => "cut");
    assert.equal(cut, "cut");
    await s.close();
  });

  it("ends every open tunnel when the run is over", async () => {
    const p = await proxyFor(policy());
    const t = await connect(p.proxy.path, `127.0.0.1:${tlsPort}`);
    const closed = new Promise((r) => t.socket.once("close", r));
    p.network?.close();
    p.proxy.detach();
    await closed;
    await p.close();
  });
});
