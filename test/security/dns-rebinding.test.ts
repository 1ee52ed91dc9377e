// Threat: a name passes the check with one address and is resolved again at connect time to
// another (DNS rebinding), or answers with a public and a private address at once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tableResolver } from "../helpers/http.ts";
import { networkWorld, type NetworkWorld } from "../helpers/network.ts";

let w: NetworkWorld;
let flip = 0;
const dns = tableResolver({
  // first answer: the allowed server; every later one: the metadata address
  "rebind.test": () => (flip++ % 2 === 0 ? ["127.0.0.1"] : ["169.254.169.254"]),
  "both.example.com": ["93.184.216.34", "127.0.0.1"],
});
before(async () => {
  w = await networkWorld((allowed) => ({
    allow: [{ host: `rebind.test:${allowed.port}`, privateAddresses: true }, "both.example.com"],
    resolve: dns.resolve,
  }));
});
after(() => w.close());

describe("dns rebinding", () => {
  it("quickjs: one lookup per request, the connection goes to the checked address", async () => {
    const port = w.allowed.port;
    const v = await w.js(`
      const first = await (await fetch("http://rebind.test:${port}/echo")).json();
      let second; try { await fetch("http://rebind.test:${port}/echo"); second = "reached"; } catch (e) { second = e.message; }
      let both; try { await fetch("http://both.example.com/"); both = "reached"; } catch (e) { both = e.message; }
      [first.headers.host, second, both]`);
    assert.deepEqual(v, [
      `rebind.test:${port}`,
      `network: rebind.test:${port} refused: it resolves to 169.254.169.254, a metadata address (cloud instance metadata, AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, Linode, Hetzner and others at .254); only an allowlist entry that names the address itself may reach it`,
      "network: both.example.com:80 refused: it resolves to 127.0.0.1, a loopback address (Loopback, RFC 1122); only an allowlist entry that names the address itself may reach it",
    ]);
    assert.deepEqual(dns.calls, ["rebind.test", "rebind.test", "both.example.com"]);
  });

  it("pyodide: the same pinning", async () => {
    const before = dns.calls.length;
    flip = 0;
    const v = await w.py(`
import urllib.request, json
json.loads(urllib.request.urlopen("http://rebind.test:${w.allowed.port}/echo").read())["headers"]["host"]`);
    assert.equal(v, `rebind.test:${w.allowed.port}`);
    assert.equal(dns.calls.length - before, 1);
    assert.equal(w.forbidden.requests.length, 0);
  });
  it("native: the host proxy resolves once per request and connects to what it checked", async () => {
    const before = dns.calls.length;
    const seen = w.allowed.requests.length;
    flip = 0;
    const v = await w.native(`
import requests
first = requests.get("http://rebind.test:${w.allowed.port}/echo").json()["headers"]["host"]
second = requests.get("http://rebind.test:${w.allowed.port}/echo")
both = requests.get("http://both.example.com/")
[first, second.status_code, second.reason, both.reason]`);
    assert.deepEqual(v, [
      `rebind.test:${w.allowed.port}`,
      403,
      `network: rebind.test:${w.allowed.port} refused: it resolves to 169.254.169.254, a metadata address (cloud instance metadata, AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, Linode, Hetzner and others at .254); only an allowlist entry that names the address itself may reach it`,
      "network: both.example.com:80 refused: it resolves to 127.0.0.1, a loopback address (Loopback, RFC 1122); only an allowlist entry that names the address itself may reach it",
    ]);
    // The guest resolved nothing itself: every lookup is the host's.
    assert.deepEqual(dns.calls.slice(before), ["rebind.test", "rebind.test", "both.example.com"]);
    assert.equal(w.allowed.requests.length - seen, 1);
    assert.equal(w.forbidden.requests.length, 0);
  });
});
