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

  it("native: a proxy the guest sets, a direct connect, DNS and raw ctypes sockets all reach nothing", async () => {
    const fp = w.forbidden.port;
    const v = await w.native(`
import os, socket, ctypes, errno, urllib.request, requests
out = {}
# the proxy the driver set is the bridge; a guest that points the variables elsewhere reaches nothing
good = os.environ["HTTP_PROXY"]
out["proxy_env"] = good.startswith("http://127.0.0.1:") and os.environ["NO_PROXY"] == ""
os.environ["HTTP_PROXY"] = os.environ["http_proxy"] = "${w.forbidden.origin}"
try:
    requests.get("${w.allowed.origin}/hello", timeout=5); out["tampered"] = "reached"
except requests.exceptions.RequestException as e:
    out["tampered"] = type(e).__name__
try:
    socket.create_connection(("127.0.0.1", ${fp}), timeout=5); out["direct"] = "connected"
except OSError as e:
    out["direct"] = errno.errorcode.get(e.errno, str(e.errno))
try:
    socket.create_connection(("10.0.0.1", 80), timeout=5); out["route"] = "connected"
except OSError as e:
    out["route"] = errno.errorcode.get(e.errno, str(e.errno))
try:
    socket.getaddrinfo("example.com", 80); out["dns"] = "resolved"
except OSError as e:
    out["dns"] = type(e).__name__
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); out["udp"] = "made"
except OSError as e:
    out["udp"] = errno.errorcode.get(e.errno, str(e.errno))
libc = ctypes.CDLL(None, use_errno=True)
def raw(*args):
    r = libc.syscall(*args)
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
out["raw_inet_raw"] = raw(41, 2, 3, 1)      # socket(AF_INET, SOCK_RAW, ICMP)
out["raw_packet"] = raw(41, 17, 3, 0)       # socket(AF_PACKET, SOCK_RAW)
out["raw_inet6"] = raw(41, 10, 1, 0)        # socket(AF_INET6, SOCK_STREAM)
out["raw_netlink"] = raw(41, 16, 3, 0)      # socket(AF_NETLINK, SOCK_RAW)
# a raw TCP socket by syscall is allowed (the bridge needs one) and still has no route out
fd = libc.syscall(41, 2, 1, 0)
sa = (ctypes.c_ubyte * 16)(2, 0, ${fp >> 8}, ${fp & 255}, 127, 0, 0, 1)
r = libc.syscall(42, fd, sa, 16)
out["raw_connect"] = "connected" if r == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
# the proxy's own socket, spoken to directly, applies the same policy
u = socket.socket(socket.AF_UNIX); u.connect("/sandbox/net/proxy.sock")
u.sendall(b"GET ${w.forbidden.origin}/hello HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
out["unix_direct"] = u.recv(200).split(b"\\r\\n")[0].decode()
os.environ["HTTP_PROXY"] = os.environ["http_proxy"] = good
out["restored"] = urllib.request.urlopen("${w.allowed.origin}/hello").read().decode()
out`);
    assert.deepEqual(v, {
      proxy_env: true,
      tampered: "ProxyError",
      direct: "ECONNREFUSED",
      route: "ENETUNREACH",
      dns: "gaierror",
      udp: "EPERM",
      raw_inet_raw: "EPERM",
      raw_packet: "EPERM",
      raw_inet6: "EPERM",
      raw_netlink: "EPERM",
      raw_connect: "ECONNREFUSED",
      unix_direct: `HTTP/1.1 403 network: 127.0.0.1:${fp} refused: not in the allowlist`,
      restored: "hello",
    });
    assert.equal(w.forbidden.requests.length, 0);
  });
});
