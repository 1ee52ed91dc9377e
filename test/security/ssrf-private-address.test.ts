// Threat: guest code reaches internal services (the host's loopback, private networks, the cloud
// metadata service) through an allowed name that resolves there, or through another spelling of an
// address (decimal, hex, IPv4-mapped IPv6) that the allowlist does not name.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tableResolver } from "../helpers/http.ts";
import { jsProbe, nativeProbe, networkWorld, pyFetchProbe, pyProbe, type NetworkWorld } from "../helpers/network.ts";

let w: NetworkWorld;
const dns = tableResolver({
  "loopback.example.com": ["127.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
  "private.example.com": ["10.0.0.7"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
});
before(async () => {
  w = await networkWorld((allowed) => ({
    allow: ["*.example.com", `*.example.com:${allowed.port}`, `127.0.0.1:${allowed.port}`],
    resolve: dns.resolve,
  }));
});
after(() => w.close());

const urls = () => {
  const p = w.forbidden.port;
  return [
    `http://loopback.example.com:${w.allowed.port}/hello`,
    `http://metadata.example.com/latest/meta-data/`,
    `http://private.example.com/`,
    `http://mapped.example.com:${w.allowed.port}/hello`,
    `http://2130706433:${p}/`,
    `http://0x7f.1:${p}/`,
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://127.0.0.1:${p}/`,
  ];
};
const expected = () => {
  const p = w.forbidden.port;
  const a = w.allowed.port;
  const only = "only an allowlist entry that names the address itself may reach it";
  return [
    `network: loopback.example.com:${a} refused: it resolves to 127.0.0.1, a loopback address (Loopback, RFC 1122); ${only}`,
    `network: metadata.example.com:80 refused: it resolves to 169.254.169.254, a metadata address (cloud instance metadata, AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, Linode, Hetzner and others at .254); ${only}`,
    `network: private.example.com:80 refused: it resolves to 10.0.0.7, a private address (Private-Use, RFC 1918); ${only}`,
    `network: mapped.example.com:${a} refused: it resolves to ::ffff:7f00:1, a loopback address (it carries 127.0.0.1: Loopback, RFC 1122); ${only}`,
    `network: 127.0.0.1:${p} refused: not in the allowlist`,
    `network: 127.0.0.1:${p} refused: not in the allowlist`,
    `network: [::ffff:7f00:1]:${p} refused: not in the allowlist`,
    `network: 127.0.0.1:${p} refused: not in the allowlist`,
  ];
};

describe("ssrf to private addresses", () => {
  it("quickjs: every spelling is refused, named by host and reason", async () => {
    assert.deepEqual(await w.js(jsProbe(urls())), expected());
  });
  it("pyodide: the same refusals", async () => {
    assert.deepEqual(await w.py(pyProbe(urls())), expected());
  });
  it("pyodide: the same refusals through pyodide.http.pyfetch", async () => {
    assert.deepEqual(await w.py(pyFetchProbe(urls())), expected());
  });
  it("native: the host proxy refuses the same, with the verdict as the 403's reason", async () => {
    assert.deepEqual(await w.native(nativeProbe(urls())), expected());
  });
  it("nothing reached either server, and each refusal is an event", () => {
    assert.equal(w.forbidden.requests.length, 0);
    assert.equal(w.allowed.requests.length, 0);
    const refused = w.events.filter((e) => e.type === "egress" && !e.allowed);
    assert.equal(refused.length, 32);
    assert.equal(refused.filter((e) => e.engine === "native").length, 8);
  });
});
