// Threat: with the network option (where the child filter lets a run make stream sockets, for the
// bridge to the host proxy), run N listens on an abstract unix socket or a loopback port and waits
// for run N+1 on the same warm parent to connect to it (or N+1 listens where N's leftover would
// answer). Abstract names and ports belong to a network namespace, and every child of the parent gets
// its own (src/engines/native/parent.py), torn down when it ends: run N+1 finds nothing. The
// network bridge keeps working in each child. On both parents a stateless run may have (each has a
// proxy of its own; src/engines/native/route.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { startHttpServer, type TestServer } from "../helpers/http.ts";
import { NATIVE_PARENTS } from "../helpers/native.ts";

let sandbox: Sandbox;
let web: TestServer;
let route = (code: string) => code;
const run = async (code: string) => {
  const r = await sandbox.run({
    language: "python",
    engine: "native",
    code: route(code),
    limits: { timeoutMs: 20_000 },
  });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
  return r.value;
};

for (const parent of NATIVE_PARENTS)
  describe(`native warm parent (${parent.name}): sockets left by run N`, () => {
    before(async () => {
      route = parent.route;
      web = await startHttpServer();
      sandbox = await createSandbox({
        python: { engine: "native", pool: 1 },
        network: { allow: [`127.0.0.1:${web.port}`] },
      });
    });
    after(async () => {
      await sandbox.close();
      await web.close();
    });

    it("an abstract socket and a loopback listener are gone; the proxy still answers", async () => {
      const left = await run(`
import socket, threading
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
a.bind("\\0wasmcell-sibling"); a.listen(1)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 47011)); t.listen(1)
'listening'`);
      assert.equal(left, "listening");
      const seen = await run(`
import socket, urllib.request, urllib.error
out = []
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("\\0wasmcell-sibling"); out.append("abstract reached")
except OSError as e:
    out.append(type(e).__name__)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.connect(("127.0.0.1", 47011)); out.append("port reached")
except OSError as e:
    out.append(type(e).__name__)
try:
    urllib.request.urlopen("http://127.0.0.1:${web.port}/x", timeout=10); out.append("answered")
except urllib.error.HTTPError:
    out.append("answered")  # the test server's answer, through the host proxy
out`);
      assert.deepEqual(seen, ["ConnectionRefusedError", "ConnectionRefusedError", "answered"]);
      assert.ok(web.requests.length >= 1, "the request reached the server through the proxy");
    });
  });
