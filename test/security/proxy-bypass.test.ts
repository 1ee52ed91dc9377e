// Threat: guest code steers its request around the policy through proxy settings — the host's
// HTTP(S)_PROXY environment, a proxy the guest configures itself, proxy headers — or opens a socket
// directly instead of going through the gate.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { networkWorld, type NetworkWorld } from "../helpers/network.ts";

let w: NetworkWorld;
const saved = { ...process.env };
before(async () => {
  w = await networkWorld((allowed) => ({ allow: [`127.0.0.1:${allowed.port}`] }));
  // The host itself is configured for a proxy: guest requests must not use it.
  process.env.HTTP_PROXY = process.env.http_proxy = w.forbidden.origin;
  process.env.NODE_USE_ENV_PROXY = "1";
});
after(async () => {
  process.env = saved;
  await w.close();
});

describe("proxy bypass", () => {
  it("quickjs: the host's proxy settings and guest proxy headers are ignored", async () => {
    const v = (await w.js(`
      const r = await fetch("${w.allowed.origin}/echo", { headers: { "proxy-authorization": "Basic x", "proxy-connection": "keep-alive" } });
      (await r.json()).headers`)) as Record<string, string>;
    assert.equal(v["proxy-authorization"], undefined);
    assert.equal(v["proxy-connection"], undefined);
    assert.equal(w.forbidden.requests.length, 0);
  });

  it("pyodide: a proxy the guest configures is never contacted; sockets fail at once", async () => {
    const v = await w.py(`
import os, urllib.request, socket
os.environ["http_proxy"] = "${w.forbidden.origin}"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": "${w.forbidden.origin}"}))
body = opener.open("${w.allowed.origin}/hello").read().decode()
try:
    socket.create_connection(("127.0.0.1", ${w.forbidden.port}), timeout=5)
    direct = "connected"
except OSError as e:
    direct = "refused"
try:
    s = socket.socket(); s.settimeout(5); s.connect(("127.0.0.1", ${w.forbidden.port})); direct2 = "connected"
except OSError:
    direct2 = "refused"
[body, direct, direct2]`);
    assert.deepEqual(v, ["hello", "refused", "refused"]);
    assert.equal(w.forbidden.requests.length, 0);
  });
});
