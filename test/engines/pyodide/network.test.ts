import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import type { SandboxEvent } from "../../../src/core/events.ts";
import { startHttpServer, type TestServer } from "../../helpers/http.ts";
import { FULL } from "../../helpers/pyodide.ts";

let server: TestServer;
let other: TestServer;
let sandbox: Sandbox;
const events: SandboxEvent[] = [];
before(async () => {
  server = await startHttpServer();
  other = await startHttpServer();
  sandbox = await createSandbox({
    python: { pool: 1 },
    seal: FULL,
    network: {
      allow: [{ host: `127.0.0.1:${server.port}`, headers: { "x-api-key": "secret" } }],
      maxResponseBytes: 1000,
    },
    onEvent: (e) => events.push(e),
  });
});
after(async () => {
  await sandbox.close();
  await server.close();
  await other.close();
});
const py = async (code: string, extra: object = {}) => {
  const r = await sandbox.run({ language: "python", code, ...extra });
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
};

describe("pyodide network", () => {
  it("urllib.request and http.client reach an allowed host through the host", async () => {
    const v = await py(`
import urllib.request, http.client, json
r = urllib.request.urlopen(urllib.request.Request("${server.origin}/echo", data=b"abc", headers={"X-A": "1"}))
seen = json.loads(r.read())
c = http.client.HTTPConnection("127.0.0.1", ${server.port})
c.request("GET", "/hello")
cr = c.getresponse()
hop = urllib.request.urlopen("${server.origin}/redirect?to=/hello")
[r.status, r.headers["x-reply"], seen["method"], seen["body"], seen["headers"]["x-a"], seen["headers"]["x-api-key"], cr.status, cr.read().decode(), hop.read().decode(), hop.url]`);
    assert.deepEqual(v, [200, "yes", "POST", "abc", "1", "secret", 200, "hello", "hello", `${server.origin}/hello`]);
  });

  it("refusals are exceptions naming the host and why; the other listener sees nothing", async () => {
    const v = await py(`
import urllib.request, urllib.error, socket
out = []
for url in ["${other.origin}/hello", "${server.origin}/redirect?to=${encodeURIComponent(`${other.origin}/hello`)}", "${server.origin}/bytes?n=2000"]:
    try:
        urllib.request.urlopen(url).read()
        out.append("reached")
    except urllib.error.URLError as e:
        out.append(str(e.reason))
try:
    socket.create_connection(("127.0.0.1", ${other.port}), timeout=5)
except OSError as e:
    out.append("socket: " + e.strerror)
out`);
    assert.deepEqual(v, [
      `[Errno 2] network: 127.0.0.1:${other.port} refused: not in the allowlist`,
      `[Errno 2] network: 127.0.0.1:${other.port} refused: not in the allowlist`,
      `[Errno 2] network: the response from 127.0.0.1:${server.port} is over the 1000-byte cap (network.maxResponseBytes)`,
      "socket: direct sockets are not available in the sandbox; use urllib.request, http.client or pyodide.http.pyfetch, which go through the host's allowlist",
    ]);
    assert.equal(other.requests.length, 0);
    assert.ok(events.some((e) => e.type === "egress" && e.engine === "pyodide" && e.allowed));
  });

  it("requests (from the package library) sends through the same gated bridge", async () => {
    const before = other.requests.length;
    const v = await py(`
import requests
r = requests.post("${server.origin}/echo", json={"a": 1}, headers={"X-A": "1"})
seen = r.json()
hop = requests.get("${server.origin}/redirect?to=/hello")
out = [r.status_code, r.headers["x-reply"], seen["method"], seen["body"], seen["headers"]["x-a"], seen["headers"]["x-api-key"], hop.text, hop.url, len(hop.history)]
for url in ["${other.origin}/hello", "${server.origin}/redirect?to=${encodeURIComponent(`${other.origin}/hello`)}"]:
    try:
        requests.get(url)
        out.append("reached")
    except requests.ConnectionError as e:
        out.append(str(e))
out`);
    assert.deepEqual(v, [
      200,
      "yes",
      "POST",
      '{"a": 1}',
      "1",
      "secret",
      "hello",
      `${server.origin}/hello`,
      1,
      `network: 127.0.0.1:${other.port} refused: not in the allowlist`,
      `network: 127.0.0.1:${other.port} refused: not in the allowlist`,
    ]);
    assert.equal(other.requests.length, before);
  });

  it("without network, urlopen fails at once instead of hanging to the deadline", async () => {
    const started = performance.now();
    const v = await py(
      `
import urllib.request
try:
    urllib.request.urlopen("${server.origin}/hello", timeout=30)
except Exception as e:
    r = type(e).__name__ + ": " + str(e.reason)
r`,
      { network: false, limits: { timeoutMs: 20_000 } },
    );
    assert.equal(v, "URLError: [Errno 2] network: this sandbox grants no network (the network option)");
    assert.ok(performance.now() - started < 15_000, "well before the deadline");
  });

  it("the bridge Python holds is a Python function over a device: bytes in, the host's reply out", async () => {
    // No JavaScript function is handed to Python (test/security/pyodide-bridge-realm-escape.test.ts).
    const v = await py(`
import http.client, types
fn = http.client.HTTPConnection._wasmcell_fetch.__globals__["_wasmcell_host_fetch"]
[isinstance(fn, types.FunctionType), sorted({type(d).__name__ for d in fn.__kwdefaults__.values()}),
 fn('{"not": "a request"}')]`);
    assert.deepEqual(v, [true, ["int", "module", "str"], '{"ok":false,"error":"network: the URL must be a string"}']);
  });

  it("pyodide.http.pyfetch: an async FetchResponse over the same gated bridge, redirects followed", async () => {
    const v = await py(`
from pyodide.http import pyfetch, open_url, HttpStatusError, FetchResponse
r = await pyfetch("${server.origin}/echo", method="POST", body="abc", headers={"X-A": "1"})
seen = await r.json()
hop = await pyfetch("${server.origin}/redirect?status=303&to=/hello", method="POST", body=b"x")
missing = await pyfetch("${server.origin}/nope")
try:
    missing.raise_for_status()
    raised = None
except HttpStatusError as e:
    raised = [e.status, isinstance(e, OSError)]
again = await pyfetch("${server.origin}/hello")
first = (await again.clone().bytes()).decode()
text = await again.string()
try:
    await again.text()
    used = "read twice"
except OSError as e:
    used = type(e).__name__
manual = await pyfetch("${server.origin}/redirect?to=/hello", redirect="manual")
[r.status, r.ok, r.headers["x-reply"], r.url, isinstance(r, FetchResponse), seen["method"], seen["body"],
 seen["headers"]["x-a"], seen["headers"]["x-api-key"],
 hop.status, await hop.text(), hop.redirected, hop.url,
 missing.ok, raised, first, text, used, manual.status, manual.headers["location"],
 open_url("${server.origin}/redirect?to=/hello").read()]`);
    assert.deepEqual(v, [
      200,
      true,
      "yes",
      `${server.origin}/echo`,
      true,
      "POST",
      "abc",
      "1",
      "secret",
      200,
      "hello",
      true,
      `${server.origin}/hello`,
      false,
      [404, true],
      "hello",
      "hello",
      "BodyUsedError",
      302,
      "/hello",
      "hello",
    ]);
  });

  it("pyfetch: refusals name the host and why; without network it fails at once; pyodide itself stays blocked", async () => {
    const v = await py(`
from pyodide.http import pyfetch
out = []
for url in ["${other.origin}/hello", "${server.origin}/redirect?to=${encodeURIComponent(`${other.origin}/hello`)}"]:
    try:
        await pyfetch(url)
        out.append("reached")
    except OSError as e:
        out.append(type(e).__name__ + ": " + e.strerror)
for name in ["pyodide", "pyodide.ffi", "pyodide.code", "js", "pyodide_js._module"]:
    try:
        __import__(name)
        out.append(name + " imported")
    except ImportError as e:
        out.append(type(e).__name__)
out`);
    const refused = `PermissionError: network: 127.0.0.1:${other.port} refused: not in the allowlist`;
    assert.deepEqual(v, [refused, refused, ...Array(5).fill("ModuleNotFoundError")]);
    assert.equal(other.requests.length, 0);
    // A hang would end the run at its deadline (a timeout, not this value).
    const off = await py(
      `
from pyodide.http import pyfetch, open_url
out = []
try:
    await pyfetch("${server.origin}/hello")
except OSError as e:
    out.append(type(e).__name__ + ": " + e.strerror)
try:
    open_url("${server.origin}/hello")
except OSError as e:
    out.append(type(e).__name__ + ": " + e.strerror)
out`,
      { network: false, limits: { timeoutMs: 20_000 } },
    );
    const none = "PermissionError: network: this sandbox grants no network (the network option)";
    assert.deepEqual(off, [none, none]);
  });
});
