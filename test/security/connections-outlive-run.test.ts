// Threat: a run's connections outlive the run. A multi-tenant host runs one tenant after another on
// one sandbox; a run that opens requests to a slow server, reads only their headers and returns must
// not leave those sockets open into the next tenant's run (until its deadline), or the per-run caps
// (maxRequests, network.timeoutMs) stop bounding what one tenant holds on the host. Every socket of a
// run is the run's, and is destroyed when the run settles — on the worker-thread path as in-process,
// and on the native Python tier through its proxy. (Pyodide's bridge reads each body whole, so a run
// there cannot return with a response half read.)
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { openSockets } from "../../src/network/run-network.ts";

/** Headers at once, then a byte now and then: a body that would hold a socket until the deadline. */
interface SlowServer {
  origin: string;
  /** `127.0.0.1:PORT`, the allowlist entry. */
  host: string;
  /** Connections the server holds open now. */
  open(): number;
  /** The most sockets the gate held at once, sampled at each request the server took. */
  peakGateSockets: number;
  close(): Promise<void>;
}

async function startSlowServer(): Promise<SlowServer> {
  const conns = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const self: SlowServer = {
    origin: "",
    host: "",
    open: () => conns.size,
    peakGateSockets: 0,
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const c of conns) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((_req, res) => {
    self.peakGateSockets = Math.max(self.peakGateSockets, openSockets());
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("start");
    const t = setInterval(() => res.write("."), 500);
    timers.add(t);
    res.on("close", () => {
      clearInterval(t);
      timers.delete(t);
    });
  });
  server.on("connection", (c: Socket) => {
    conns.add(c);
    c.on("close", () => conns.delete(c));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  self.host = `127.0.0.1:${address.port}`;
  self.origin = `http://${self.host}`;
  return self;
}

/** Waits (bounded) until the server holds no connection; returns how many it still holds. */
async function serverDrained(server: SlowServer): Promise<number> {
  for (let i = 0; i < 100 && server.open() > 0; i++) await new Promise((r) => setTimeout(r, 20));
  return server.open();
}

/** Opens `n` requests, reads each one's status and headers, and returns without reading a body. */
const headersOnly = (origin: string, n: number) => `
const rs = await Promise.all(Array.from({ length: ${n} }, (_, i) => fetch("${origin}/slow/" + i)));
rs.map((r) => r.status + " " + r.headers.get("content-type")).length`;

// The deadline and the network timeout are far off: before the fix, the sockets stayed until then.
const LIMITS = { timeoutMs: 60_000 };

for (const isolation of ["thread", "in-process"] as const) {
  describe(`javascript (${isolation}): a run's sockets are closed when the run settles`, () => {
    let server: SlowServer;
    let sandbox: Sandbox;
    before(async () => {
      server = await startSlowServer();
      sandbox = await createSandbox({
        javascript: { isolation },
        network: { allow: [server.host], timeoutMs: 60_000, maxRequests: 32 },
      });
    });
    after(async () => {
      await sandbox?.close();
      await server?.close();
    });

    it("20 requests whose headers were read: no socket of the run is open once run() resolves", async () => {
      const r = await sandbox.run({ language: "javascript", code: headersOnly(server.origin, 20), limits: LIMITS });
      assert.equal(r.ok && r.value, 20, JSON.stringify(!r.ok && r.error));
      assert.equal(openSockets(), 0);
      // The server sees each close a moment later (the FIN crosses loopback), long before any deadline.
      assert.equal(await serverDrained(server), 0);
    });

    it("a run that ends in an error, or at its deadline, leaves no socket either", async () => {
      const thrown = await sandbox.run({
        language: "javascript",
        code: `${headersOnly(server.origin, 8)}; throw new Error("bye")`,
        limits: LIMITS,
      });
      assert.equal(!thrown.ok && thrown.error.kind, "runtime", JSON.stringify(thrown));
      assert.equal(openSockets(), 0);
      const timedOut = await sandbox.run({
        language: "javascript",
        code: `${headersOnly(server.origin, 8)}; await rs[0].text()`,
        limits: { timeoutMs: 1_500 },
      });
      assert.equal(!timedOut.ok && timedOut.error.kind, "timeout", JSON.stringify(timedOut));
      assert.equal(openSockets(), 0);
      const aborted = new AbortController();
      const pending = sandbox.run({
        language: "javascript",
        code: `${headersOnly(server.origin, 8)}; await rs[0].text()`,
        limits: LIMITS,
        signal: aborted.signal,
      });
      for (let i = 0; i < 250 && openSockets() < 8; i++) await new Promise((r) => setTimeout(r, 20));
      aborted.abort();
      const r = await pending;
      assert.equal(!r.ok && r.error.kind, "aborted", JSON.stringify(r));
      assert.equal(openSockets(), 0);
      assert.equal(await serverDrained(server), 0);
    });

    if (isolation === "thread")
      it("a run whose worker is terminated (a builtin that never polls, past the deadline) leaves no socket", async () => {
        const r = await sandbox.run({
          language: "javascript",
          code: `${headersOnly(server.origin, 8)}; Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, "x")`,
          limits: { timeoutMs: 1_500 },
        });
        assert.equal(!r.ok && r.error.kind, "timeout", JSON.stringify(r));
        assert.equal(openSockets(), 0);
        assert.equal(await serverDrained(server), 0);
      });

    it("15 short runs of 32 requests each never hold more than one run's cap of sockets", async () => {
      server.peakGateSockets = 0;
      for (let i = 0; i < 15; i++) {
        const r = await sandbox.run({ language: "javascript", code: headersOnly(server.origin, 32), limits: LIMITS });
        assert.equal(r.ok && r.value, 32, JSON.stringify(!r.ok && r.error));
        assert.equal(openSockets(), 0, `after run ${i + 1}`);
      }
      assert.ok(server.peakGateSockets <= 32, `the gate held ${server.peakGateSockets} sockets at once`);
      assert.equal(await serverDrained(server), 0);
    });
  });
}

describe("python (native): a run's sockets are closed when the run settles", () => {
  let server: SlowServer;
  let sandbox: Sandbox;
  before(async () => {
    server = await startSlowServer();
    sandbox = await createSandbox({
      python: { engine: "native" },
      network: { allow: [server.host], timeoutMs: 60_000, maxRequests: 32 },
    });
  });
  after(async () => {
    await sandbox?.close();
    await server?.close();
  });

  it("8 responses whose headers were read: no socket of the run is open once run() resolves", async () => {
    const r = await sandbox.run({
      language: "python",
      engine: "native",
      code: `import urllib.request\nrs = [urllib.request.urlopen("${server.origin}/slow/%d" % i) for i in range(8)]\n[r.status for r in rs]`,
      limits: LIMITS,
    });
    assert.deepEqual(r.ok && r.value, Array(8).fill(200), JSON.stringify(!r.ok && r.error));
    assert.equal(openSockets(), 0);
    assert.equal(await serverDrained(server), 0);
  });
});
