import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NetworkDeniedError } from "../../src/core/errors.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import { Deadline } from "../../src/kit/deadline.ts";
import { RunNetwork, type GuestRequest } from "../../src/network/run-network.ts";
import { resolveOptions, type NetworkOptions } from "../../src/options/index.ts";
import { startHttpServer, tableResolver, type TestServer } from "../helpers/http.ts";

let allowed: TestServer;
let other: TestServer;
before(async () => {
  allowed = await startHttpServer();
  other = await startHttpServer();
});
after(async () => {
  await allowed.close();
  await other.close();
});

function gate(network: NetworkOptions, deadlineMs = 10_000) {
  const events: SandboxEvent[] = [];
  const o = resolveOptions({ network, onEvent: (e) => events.push(e) });
  const net = new RunNetwork(o.network!, { engine: "quickjs", deadline: new Deadline(deadlineMs), emit: o.emit });
  return { net, events };
}
const text = async (net: RunNetwork, req: GuestRequest) => {
  const r = await net.fetchAll(req);
  return { ...r, text: new TextDecoder().decode(r.body) };
};
const denied = (reason: string, pattern?: RegExp) => (e: unknown) =>
  e instanceof NetworkDeniedError && e.reason === reason && (!pattern || pattern.test(e.message));

describe("the gated fetch", () => {
  it("reaches an allowed IP literal and reports the egress", async () => {
    const { net, events } = gate({ allow: [`127.0.0.1:${allowed.port}`] });
    const r = await text(net, { url: `${allowed.origin}/hello` });
    assert.equal(r.status, 200);
    assert.equal(r.text, "hello");
    assert.equal(r.headers.find(([n]) => n === "content-type")?.[1], "text/plain");
    const e = events.find((x) => x.type === "egress");
    assert.deepEqual(e && { ...e, time: 0 }, {
      type: "egress",
      time: 0,
      engine: "quickjs",
      method: "GET",
      host: "127.0.0.1",
      port: allowed.port,
      address: "127.0.0.1",
      allowed: true,
      status: 200,
      bytesSent: 0,
      bytesReceived: 5,
    });
  });

  it("refuses a port, a host or a scheme not in the allowlist; the other listener sees nothing", async () => {
    const before = other.requests.length;
    const { net, events } = gate({ allow: [`127.0.0.1:${allowed.port}`] });
    await assert.rejects(
      net.fetch({ url: `${other.origin}/hello` }),
      denied("not-allowed", /127\.0\.0\.1:\d+ refused: not in the allowlist/),
    );
    await assert.rejects(net.fetch({ url: `http://localhost:${other.port}/` }), denied("not-allowed"));
    await assert.rejects(net.fetch({ url: `http://[::ffff:127.0.0.1]:${allowed.port}/` }), denied("not-allowed"));
    await assert.rejects(net.fetch({ url: `file:///etc/passwd` }), denied("scheme"));
    await assert.rejects(net.fetch({ url: `http://u:p@127.0.0.1:${allowed.port}/` }), denied("scheme"));
    assert.equal(other.requests.length, before);
    assert.deepEqual(
      events.filter((e) => e.type === "egress").map((e) => e.type === "egress" && [e.allowed, e.reason]),
      [
        [false, "not-allowed"],
        [false, "not-allowed"],
        [false, "not-allowed"],
        [false, "scheme"],
        [false, "scheme"],
      ],
    );
  });

  it("resolves names itself and refuses private, loopback and metadata answers", async () => {
    const dns = tableResolver({
      "loop.a.test": ["127.0.0.1"],
      "meta.a.test": ["169.254.169.254"],
      "mixed.a.test": ["93.184.216.34", "10.0.0.1"],
      "mapped.a.test": ["::ffff:127.0.0.1"],
    });
    const { net } = gate({ allow: ["*.a.test:" + allowed.port, "meta.a.test"], resolve: dns.resolve });
    await assert.rejects(
      net.fetch({ url: `http://loop.a.test:${allowed.port}/` }),
      denied("address", /resolves to 127\.0\.0\.1, a loopback address/),
    );
    await assert.rejects(net.fetch({ url: `http://mapped.a.test:${allowed.port}/` }), denied("address", /loopback/));
    await assert.rejects(net.fetch({ url: `http://mixed.a.test:${allowed.port}/` }), denied("address", /private/));
    await assert.rejects(net.fetch({ url: `http://meta.a.test/` }), denied("address", /metadata/));
    await assert.rejects(net.fetch({ url: `http://nowhere.a.test:${allowed.port}/` }), denied("dns"));
    assert.equal(allowed.requests.filter((r) => r.url === "/").length, 0);
  });

  it("pins the connection to the address it checked (one lookup, no rebinding)", async () => {
    let n = 0;
    // A rebinding resolver: the first answer is the checked one, every later answer points elsewhere.
    const dns = tableResolver({ "svc.test": () => (n++ === 0 ? ["127.0.0.1"] : ["169.254.169.254"]) });
    const { net } = gate({
      allow: [{ host: `svc.test:${allowed.port}`, privateAddresses: true }],
      resolve: dns.resolve,
    });
    const r = await text(net, { url: `http://svc.test:${allowed.port}/echo` });
    assert.equal(r.status, 200);
    assert.equal(JSON.parse(r.text).headers.host, `svc.test:${allowed.port}`);
    assert.deepEqual(dns.calls, ["svc.test"]);
    // privateAddresses never opens the metadata service
    await assert.rejects(net.fetch({ url: `http://svc.test:${allowed.port}/echo` }), denied("address", /metadata/));
  });

  it("checks every redirect hop; a redirect to a denied host never reaches it", async () => {
    const before = other.requests.length;
    const { net, events } = gate({ allow: [`127.0.0.1:${allowed.port}`] });
    const to = encodeURIComponent(`${other.origin}/hello`);
    await assert.rejects(
      net.fetch({ url: `${allowed.origin}/redirect?to=${to}` }),
      denied("redirect", /redirect from 127\.0\.0\.1:\d+ to a host that is not in the allowlist/),
    );
    assert.equal(other.requests.length, before);
    const ok = await text(net, { url: `${allowed.origin}/redirect?to=/hello` });
    assert.equal(ok.text, "hello");
    assert.equal(ok.redirected, true);
    assert.ok(events.some((e) => e.type === "egress" && e.reason === "redirect"));
    const manual = await net.fetch({ url: `${allowed.origin}/redirect?to=${to}`, redirect: "manual" });
    manual.body.cancel();
    assert.equal(manual.status, 302);
    assert.equal(other.requests.length, before);
  });

  it("injects the entry's headers, drops the guest's Host, keeps injected headers off other entries", async () => {
    const { net } = gate({
      allow: [{ host: `127.0.0.1:${allowed.port}`, headers: { "X-Api-Key": "secret" } }, `127.0.0.1:${other.port}`],
    });
    const r = await text(net, {
      url: `${allowed.origin}/echo`,
      method: "POST",
      headers: [
        ["x-api-key", "guest"],
        ["host", "evil.test"],
        ["content-type", "text/plain"],
      ],
      body: new TextEncoder().encode("payload"),
    });
    const seen = JSON.parse(r.text);
    assert.equal(seen.headers["x-api-key"], "secret");
    assert.equal(seen.headers.host, `127.0.0.1:${allowed.port}`);
    assert.equal(seen.body, "payload");
    assert.equal(seen.headers.cookie, undefined);
    const to = encodeURIComponent(`${other.origin}/echo`);
    const hop = await text(net, {
      url: `${allowed.origin}/redirect?to=${to}&status=307`,
      headers: [["authorization", "Bearer guest"]],
    });
    const seenOther = JSON.parse(hop.text);
    assert.equal(seenOther.headers["x-api-key"], undefined, "the secret is not carried to another entry");
    assert.equal(seenOther.headers.authorization, undefined, "credentials are dropped across origins");
  });

  it("holds the caps: requests, bytes per response and per run, methods, request body, time", async () => {
    const { net, events } = gate({ allow: [`127.0.0.1:${allowed.port}`], maxRequests: 2, maxResponseBytes: 100 });
    await text(net, { url: `${allowed.origin}/bytes?n=100` });
    await assert.rejects(
      text(net, { url: `${allowed.origin}/bytes?n=101` }),
      denied("limit", /100-byte cap \(network\.maxResponseBytes\)/),
    );
    await assert.rejects(net.fetch({ url: `${allowed.origin}/hello` }), denied("limit", /may make 2 requests/));
    assert.ok(events.some((e) => e.type === "limit" && e.limit === "network.maxRequests" && e.value === 2));
    assert.ok(events.some((e) => e.type === "limit" && e.limit === "network.maxResponseBytes"));

    const total = gate({ allow: [`127.0.0.1:${allowed.port}`], maxTotalBytes: 150 }).net;
    await text(total, { url: `${allowed.origin}/bytes?n=100` });
    await assert.rejects(
      text(total, { url: `${allowed.origin}/bytes?n=100` }),
      denied("limit", /network\.maxTotalBytes/),
    );

    const methods = gate({ allow: [`127.0.0.1:${allowed.port}`], methods: ["GET"], maxRequestBytes: 4 }).net;
    await assert.rejects(methods.fetch({ url: `${allowed.origin}/echo`, method: "DELETE" }), denied("method"));
    await assert.rejects(
      methods.fetch({ url: `${allowed.origin}/echo`, body: new Uint8Array(5) }),
      denied("limit", /maxRequestBytes/),
    );

    const slow = gate({ allow: [`127.0.0.1:${allowed.port}`], timeoutMs: 200 }).net;
    await assert.rejects(text(slow, { url: `${allowed.origin}/slow` }), denied("timeout"));
    const deadline = gate({ allow: [`127.0.0.1:${allowed.port}`] }, 0).net;
    await assert.rejects(text(deadline, { url: `${allowed.origin}/slow` }), denied("timeout"));
  });

  it("a body cut by the request's timeout is one network.timeoutMs limit event, not two", async () => {
    // The head came, then the body stalled: the connection's error and the body's read both see the
    // abort, and only one of them may report it (events count what fired).
    const { net, events } = gate({ allow: [`127.0.0.1:${allowed.port}`], timeoutMs: 300 });
    const r = await net.fetch({ url: `${allowed.origin}/slow` });
    await assert.rejects(
      (async () => {
        while (await r.body.read());
      })(),
      denied("timeout"),
    );
    const limits = events.filter((e) => e.type === "limit");
    assert.deepEqual(
      limits.map((e) => e.type === "limit" && e.limit),
      ["network.timeoutMs"],
    );
  });

  it("ignores the host's proxy settings", async () => {
    const saved = { ...process.env };
    process.env.HTTP_PROXY = other.origin;
    process.env.http_proxy = other.origin;
    process.env.NODE_USE_ENV_PROXY = "1";
    const before = other.requests.length;
    try {
      const { net } = gate({ allow: [`127.0.0.1:${allowed.port}`] });
      assert.equal((await text(net, { url: `${allowed.origin}/hello` })).text, "hello");
    } finally {
      process.env = saved;
    }
    assert.equal(other.requests.length, before);
  });

  it("ends open requests when the run ends", async () => {
    const { net } = gate({ allow: [`127.0.0.1:${allowed.port}`] });
    const r = await net.fetch({ url: `${allowed.origin}/slow` });
    const reading = r.body.read().then(() => r.body.read());
    net.close();
    assert.equal(await reading.catch(() => null), null);
  });
});
