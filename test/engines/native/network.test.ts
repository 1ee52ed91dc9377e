// The native tier's network end to end: unmodified `requests` and `urllib` inside the jail reach an
// allowed local HTTP server and a local TLS server (CONNECT through the host proxy), and the run's
// caps, narrowing and deadline hold. The threats (bypass, rebinding, SSRF, redirects) are in
// test/security/.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import type { SandboxEvent } from "../../../src/core/events.ts";
import { startHttpServer, startTlsServer, type TestServer } from "../../helpers/http.ts";

let dir: string;
let ca: Buffer;
let web: TestServer;
let other: TestServer;
let closeSecure: () => Promise<void>;
let securePort: number;
let sandbox: Sandbox;
const events: SandboxEvent[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "wasmcell-native-net-"));
  const server = await startTlsServer(dir, (req, res) => res.end(`secure ${req.method} ${req.url}`));
  ({ ca, port: securePort, close: closeSecure } = server);
  web = await startHttpServer();
  other = await startHttpServer();
  sandbox = await createSandbox({
    python: { engine: "native", pool: 1 },
    seal: { seccomp: "kill" },
    network: { allow: [`127.0.0.1:${web.port}`, `127.0.0.1:${securePort}`], maxRequests: 20 },
    onEvent: (e) => events.push(e),
  });
});
after(async () => {
  await sandbox.close();
  await closeSecure();
  await web.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

async function value(code: string, extra: object = {}): Promise<unknown> {
  const r = await sandbox.run({ language: "python", code, files: { "ca.pem": ca }, ...extra });
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
}

describe("native network", () => {
  it("unmodified requests and urllib reach the allowed HTTP server", async () => {
    const v = await value(`
import requests, urllib.request, json
a = requests.post("${web.origin}/echo", json={"x": 1}).json()
b = urllib.request.urlopen("${web.origin}/hello").read().decode()
[a["method"], a["body"], b]`);
    assert.deepEqual(v, ["POST", '{"x": 1}', "hello"]);
  });

  it("https goes through CONNECT: TLS end to end with the real server, verified against its CA", async () => {
    const v = await value(`
import requests, ssl, urllib.request
a = requests.get("https://127.0.0.1:${securePort}/a", verify="ca.pem").text
ctx = ssl.create_default_context(cafile="ca.pem")
b = urllib.request.urlopen("https://127.0.0.1:${securePort}/b", context=ctx).read().decode()
c = requests.get("https://127.0.0.1:${securePort}/c", verify=False).text
try:
    requests.get("https://127.0.0.1:${other.port}/", verify=False)
    d = "reached"
except requests.exceptions.ProxyError as e:
    d = str(e)
[a, b, c, "not in the allowlist" in d and "127.0.0.1:${other.port}" in d]`);
    assert.deepEqual(v, ["secure GET /a", "secure GET /b", "secure GET /c", true]);
    assert.ok(events.some((e) => e.type === "egress" && e.engine === "native" && e.method === "CONNECT" && e.allowed));
    assert.equal(other.requests.length, 0);
  });

  it("a run narrows the sandbox's network and lowers its caps; the proxy holds them", async () => {
    const v = await value(
      `
import requests
out = [requests.get("${web.origin}/hello").status_code]
r = requests.get("${web.origin}/hello")
out += [r.status_code, r.reason]
out`,
      { network: { allow: [`127.0.0.1:${web.port}`], maxRequests: 1 } },
    );
    assert.deepEqual(v, [
      200,
      403,
      `network: 127.0.0.1:${web.port} refused: this run may make 1 requests (network.maxRequests)`,
    ]);
    const narrowed = await value(
      `
import requests
try:
    requests.get("https://127.0.0.1:${securePort}/", verify=False); out = "reached"
except requests.exceptions.ProxyError as e:
    out = "not in the allowlist" in str(e)
out`,
      { network: { allow: [`127.0.0.1:${web.port}`] } },
    );
    assert.equal(narrowed, true);
  });

  it("a response over the byte cap and a server that never finishes end the request, not the run", async () => {
    const v = await value(
      `
import requests
out = []
r = requests.get("${web.origin}/bytes?n=5000")
out.append([r.status_code, r.reason])
try:
    requests.get("${web.origin}/slow").text
    out.append("complete")
except requests.exceptions.RequestException as e:
    out.append(type(e).__name__)
out`,
      { network: { maxResponseBytes: 1000, timeoutMs: 500 } },
    );
    assert.deepEqual(v, [
      [403, `network: the response from 127.0.0.1:${web.port} is over the 1000-byte cap (network.maxResponseBytes)`],
      // the head came, then the body stopped: the connection is cut at the deadline
      "ChunkedEncodingError",
    ]);
    assert.ok(events.some((e) => e.type === "limit" && e.limit === "network.maxResponseBytes"));
    assert.ok(events.some((e) => e.type === "limit" && e.limit === "network.timeoutMs"));
  });

  it("a run with network: false in a sandbox with network gets no bridge and reaches nothing, at once", async () => {
    const v = await value(
      `
import urllib.request, urllib.error
try:
    urllib.request.urlopen("${web.origin}/hello", timeout=30); out = "reached"
except urllib.error.URLError as e:
    out = str(e.reason)
out`,
      { network: false },
    );
    // no bridge and no proxy variables: the namespace's lo answers, and nothing listens there
    assert.match(String(v), /Connection refused/);
    assert.equal(other.requests.length, 0);
  });
});
