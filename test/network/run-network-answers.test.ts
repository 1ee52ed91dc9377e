// Threat: an allowed server the guest's author controls answers with what HTTP clients are not
// built for (statuses 000–099 and 600–999, an upgrade, an informational answer with nothing after
// it, a malformed head, a body that trickles or stops). The gate and the native tier's proxy must
// settle every request with a clear error, leave no socket open, and never throw where nothing
// catches (which would end the host's process, and every tenant's runs with it).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { NetworkDeniedError } from "../../src/core/errors.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import { Deadline } from "../../src/kit/deadline.ts";
import { RunNetwork } from "../../src/network/run-network.ts";
import { NetworkProxy } from "../../src/network/proxy.ts";
import { resolveOptions } from "../../src/options/index.ts";
import { HOSTILE_ANSWERS, hostileAnswer, hostileOutcome, startRawServer, type RawServer } from "../helpers/raw-http.ts";

const BIG = 8 * 1024 * 1024;
let server: RawServer;
let dir: string;
before(async () => {
  const big = {
    steps: [`HTTP/1.1 200 OK\r\ncontent-length: ${BIG}\r\n\r\n`, new Uint8Array(BIG)],
    then: "end" as const,
  };
  // No length, no chunking: the body is whatever comes until the connection closes, and it never does.
  const unbounded = { steps: ["HTTP/1.0 200 OK\r\n\r\nabc"], then: "hang" as const };
  server = await startRawServer((path) =>
    path === "/big" ? big : path === "/unbounded" ? unbounded : hostileAnswer(path),
  );
  dir = mkdtempSync(join(tmpdir(), "wasmcell-answers-test-"));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function gate(timeoutMs = 2_000) {
  const events: SandboxEvent[] = [];
  const o = resolveOptions({
    network: { allow: [`127.0.0.1:${server.port}`], timeoutMs, maxResponseBytes: BIG * 2, maxTotalBytes: BIG * 4 },
    onEvent: (e) => events.push(e),
  });
  const net = new RunNetwork(o.network!, { engine: "quickjs", deadline: new Deadline(10_000), emit: o.emit });
  return { net, events, policy: o.network! };
}

/** What the request came to: "reached STATUS BODY" or the error's message; "HANG" past `ms`. */
async function outcome(work: Promise<{ status: number; body: Uint8Array }>, ms = 5_000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("HANG"), ms)));
  const settled = work.then(
    (r) => `reached ${r.status} ${new TextDecoder().decode(r.body)}`,
    (e: unknown) => (e instanceof Error ? e.message : `non-error ${String(e)}`),
  );
  try {
    return await Promise.race([settled, hang]);
  } finally {
    clearTimeout(timer);
  }
}

describe("hostile answers at the gate", () => {
  for (const [path, { expect }] of Object.entries(HOSTILE_ANSWERS)) {
    it(`${path}: ${expect === "refused" || expect === "failed" ? expect : "read"}, settled, nothing left open`, async () => {
      const { net, events } = gate();
      const got = await outcome(net.fetchAll({ url: `${server.origin}${path}` }));
      assert.match(got, hostileOutcome(expect));
      if (expect === "refused") {
        const e = events.find((x) => x.type === "egress");
        assert.ok(e?.type === "egress" && !e.allowed && e.reason === "response", JSON.stringify(e));
      }
      net.close();
      await server.drained();
    });
  }

  it("the refusal is a NetworkDeniedError with reason response", async () => {
    const { net } = gate();
    await assert.rejects(
      net.fetch({ url: `${server.origin}/s600` }),
      (e) => e instanceof NetworkDeniedError && e.reason === "response" && /status 600/.test(e.message),
    );
    net.close();
  });

  it("a caller's abort and the run's end settle a request whose answer never comes", async () => {
    const { net } = gate(60_000);
    const abort = new AbortController();
    const pending = outcome(net.fetchAll({ url: `${server.origin}/s101-upgrade` }, abort.signal));
    setTimeout(() => abort.abort(), 50);
    assert.match(await pending, /^network: /);
    // A server that sends nothing at all: the run's end settles it.
    const silent = outcome(net.fetchAll({ url: `${server.origin}/silent` }));
    setTimeout(() => net.close(), 50);
    assert.match(await silent, /^network: /);
    await server.drained();
  });
});

describe("a body cut by the request's timeout", () => {
  it("is a timeout, never a complete answer (a body without a length ends at close)", async () => {
    const { net, events } = gate(300);
    const got = await outcome(net.fetchAll({ url: `${server.origin}/unbounded` }));
    assert.match(got, /did not answer in time/);
    assert.ok(events.some((e) => e.type === "limit" && e.limit === "network.timeoutMs"));
    net.close();
    await server.drained();
  });
});

describe("hostile answers through the native tier's proxy", () => {
  /** A forward request through the proxy's socket: status, reason phrase and body, or the error. */
  const forward = (path: string, url: string) =>
    new Promise<{ status: number; body: Uint8Array }>((resolve, reject) => {
      const req = http.request({ socketPath: path, path: url }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          if ((res.statusCode ?? 0) === 502) reject(new Error(res.statusMessage ?? ""));
          else resolve({ status: res.statusCode ?? 0, body: new TextEncoder().encode(text) });
        });
        // A cut after the head: what an HTTP client in the jail sees as a broken answer.
        res.on("error", (e) => reject(new Error(`network: the proxy connection failed: ${e.message}`)));
      });
      req.on("error", (e) => reject(new Error(`network: the proxy connection failed: ${e.message}`)));
      req.end();
    });

  for (const [path, { expect }] of Object.entries(HOSTILE_ANSWERS)) {
    it(`${path}: the host survives, the jail gets an answer or a cut connection`, async () => {
      const { net, events } = gate();
      const proxy = await NetworkProxy.listen(join(dir, `p${path.slice(1)}.sock`));
      proxy.attach({ network: net, engine: "native", emit: () => undefined });
      const got = await outcome(forward(proxy.path, `${server.origin}${path}`));
      assert.match(got, hostileOutcome(expect));
      if (expect === "refused") assert.ok(events.some((e) => e.type === "egress" && e.reason === "response"));
      net.close();
      await proxy.close();
      await server.drained();
    });
  }

  it("an 8 MiB answer to a slow reader leaves no listener behind per wait", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const { net } = gate(20_000);
    const proxy = await NetworkProxy.listen(join(dir, "big.sock"));
    proxy.attach({ network: net, engine: "native", emit: () => undefined });
    const bytes = await new Promise<number>((resolve, reject) => {
      const req = http.request({ socketPath: proxy.path, path: `${server.origin}/big` }, (res) => {
        let n = 0;
        // Read in small steps with pauses, so the proxy waits for drain again and again.
        res.on("data", (c: Buffer) => {
          n += c.byteLength;
          res.pause();
          setImmediate(() => res.resume());
        });
        res.on("end", () => resolve(n));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
    await new Promise((r) => setImmediate(r));
    process.off("warning", onWarning);
    assert.equal(bytes, BIG);
    assert.deepEqual(
      warnings.filter((x) => /MaxListeners/.test(x)),
      [],
    );
    net.close();
    await proxy.close();
  });

  it("a gate that hands back a status Node refuses to write is answered 502, not thrown", async () => {
    const events: unknown[] = [];
    const fake = {
      policy: gate().policy,
      fetch: () =>
        Promise.resolve({
          url: "http://x/",
          status: 99,
          statusText: "Low",
          headers: [],
          redirected: false,
          body: { read: () => Promise.resolve(null), cancel: () => undefined },
        }),
    } as unknown as RunNetwork;
    const proxy = await NetworkProxy.listen(join(dir, "fake.sock"));
    proxy.attach({ network: fake, engine: "native", emit: (e) => events.push(e) });
    assert.match(await outcome(forward(proxy.path, "http://127.0.0.1:1/")), /status 99/);
    assert.ok(events.some((e) => (e as SandboxEvent).type === "egress"));
    await proxy.close();
  });
});
