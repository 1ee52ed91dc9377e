// Threat: an allowed server (or one the guest controls behind an allowed name) redirects the request
// to a host the allowlist does not name — by IP, by name, with a 307 that keeps the POST body.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tableResolver } from "../helpers/http.ts";
import { jsProbe, nativeProbe, networkWorld, pyFetchProbe, pyProbe, type NetworkWorld } from "../helpers/network.ts";

let w: NetworkWorld;
before(async () => {
  w = await networkWorld((allowed) => ({
    allow: [{ host: `127.0.0.1:${allowed.port}`, headers: { "x-api-key": "secret" } }],
    resolve: tableResolver({ "internal.test": ["127.0.0.1"] }).resolve,
  }));
});
after(() => w.close());

const urls = () => {
  const to = (u: string, status = 302) => `${w.allowed.origin}/redirect?status=${status}&to=${encodeURIComponent(u)}`;
  return [
    to(`${w.forbidden.origin}/hello`),
    to(`http://internal.test:${w.forbidden.port}/hello`, 307),
    to(`http://169.254.169.254/latest/meta-data/`, 301),
    to(to(`${w.forbidden.origin}/hello`)),
  ];
};
const expected = () => {
  const from = `redirect from 127.0.0.1:${w.allowed.port} to a host that is not in the allowlist`;
  return [
    `network: 127.0.0.1:${w.forbidden.port} refused: ${from}`,
    `network: internal.test:${w.forbidden.port} refused: ${from}`,
    `network: 169.254.169.254:80 refused: ${from}`,
    `network: 127.0.0.1:${w.forbidden.port} refused: ${from}`,
  ];
};

describe("redirect escape", () => {
  it("quickjs: each hop is checked; the redirect target is never contacted", async () => {
    assert.deepEqual(await w.js(jsProbe(urls())), expected());
  });
  it("pyodide: urllib follows redirects hop by hop, each one checked by the host", async () => {
    const v = (await w.py(pyProbe(urls()))) as string[];
    // urllib sees the hop as a new request: the refusal names the target, not the redirect.
    assert.deepEqual(
      v,
      expected().map((m) => m.replace(/redirect from .*/, "not in the allowlist")),
    );
  });
  it("pyodide: pyfetch follows redirects hop by hop, each one checked by the host", async () => {
    const v = (await w.py(pyFetchProbe(urls()))) as string[];
    assert.deepEqual(
      v,
      expected().map((m) => m.replace(/redirect from .*/, "not in the allowlist")),
    );
  });
  it("native: the proxy passes redirects back, and each hop the client follows is checked again", async () => {
    const v = (await w.native(nativeProbe(urls()))) as string[];
    assert.deepEqual(
      v,
      expected().map((m) => m.replace(/redirect from .*/, "not in the allowlist")),
    );
    // The injected header went to the allowed server only, never to the guest or another host.
    const keys = w.allowed.requests.map((r) => r.headers["x-api-key"]);
    assert.ok(keys.length > 0 && keys.every((k) => k === "secret"));
  });
  it("nothing reached the forbidden server", () => {
    assert.equal(w.forbidden.requests.length, 0);
  });
});
