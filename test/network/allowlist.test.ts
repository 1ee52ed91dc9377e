import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllowEntryError, covers, matchRule, parseAllowEntry } from "../../src/network/allowlist.ts";

const rules = (...entries: string[]) => entries.map((e) => parseAllowEntry(e));

describe("allowlist entries", () => {
  it("parses hosts, wildcards, ports and IP literals", () => {
    assert.deepEqual(
      rules("API.Example.com", "*.wikipedia.org", "h.test:8080", "127.0.0.1:8080", "[::1]:9", "10.0.0.5").map((r) => [
        r.kind,
        r.host,
        r.port,
      ]),
      [
        ["host", "api.example.com", undefined],
        ["wildcard", "wikipedia.org", undefined],
        ["host", "h.test", 8080],
        ["address", "127.0.0.1", 8080],
        ["address", "::1", 9],
        ["address", "10.0.0.5", undefined],
      ],
    );
    assert.equal(parseAllowEntry("bücher.example").host, "xn--bcher-kva.example");
  });

  it("refuses bad entries with a message naming the problem", () => {
    const cases: Array<[unknown, RegExp]> = [
      ["", /empty/],
      ["https://api.example.com", /not a URL/],
      ["api.example.com/path", /not a URL/],
      ["user@host.test", /not a URL/],
      ["host.test:0", /bad port/],
      ["host.test:70000", /bad port/],
      ["host.test:http", /bad port/],
      ["::1", /brackets/],
      ["[example.com]", /not an IPv6/],
      ["*.com", /top-level/],
      ["a.*.example.com", /leading/],
      ["*", /leading|valid/],
      ["127.1", /write the IP address as 127\.0\.0\.1/],
      ["2130706433", /write the IP address/],
      ["bad_label.test", /valid host name/],
      [{ host: "a.test", headers: { Host: "x" } }, /set by the host/],
      [{ host: "a.test", headers: { "X-Key": "a\r\nb" } }, /CR, LF/],
      [{ host: "a.test", header: {} }, /not an entry field/],
      [42, /must be a string/],
    ];
    for (const [entry, message] of cases)
      assert.throws(
        () => parseAllowEntry(entry as never),
        (e: unknown) => e instanceof AllowEntryError && message.test(e.message),
        String(entry),
      );
  });

  it("matches default ports only, unless a port is named", () => {
    const list = rules("a.test", "b.test:8080", "*.w.test", "127.0.0.1:9000");
    assert.equal(matchRule(list, "a.test", 443, "https:")?.source, "a.test");
    assert.equal(matchRule(list, "a.test", 80, "http:")?.source, "a.test");
    assert.equal(matchRule(list, "a.test", 443, "http:"), undefined, "http on 443 is not the default");
    assert.equal(matchRule(list, "a.test", 8080, "http:"), undefined);
    assert.equal(matchRule(list, "b.test", 8080, "https:")?.source, "b.test:8080");
    assert.equal(matchRule(list, "b.test", 80, "http:"), undefined);
    assert.equal(matchRule(list, "x.w.test", 443, "https:")?.source, "*.w.test");
    assert.equal(matchRule(list, "x.y.w.test", 443, "https:")?.source, "*.w.test");
    assert.equal(matchRule(list, "w.test", 443, "https:"), undefined, "a wildcard is subdomains only");
    assert.equal(matchRule(list, "evilw.test", 443, "https:"), undefined);
    assert.equal(matchRule(list, "127.0.0.1", 9000, "http:")?.source, "127.0.0.1:9000");
    assert.equal(matchRule(list, "127.0.0.1", 9001, "http:"), undefined);
    // an IP literal in a URL never matches a host-name entry, even one that resolves to it
    assert.equal(matchRule(rules("localhost:9000"), "127.0.0.1", 9000, "http:"), undefined);
  });

  it("knows which entries a narrower list may name", () => {
    const [host, wild, port, ip] = rules("a.test", "*.w.test", "p.test:81", "127.0.0.1:9");
    const inner = (e: string) => parseAllowEntry(e);
    assert.ok(covers(host!, inner("a.test")));
    assert.ok(!covers(host!, inner("b.a.test")));
    assert.ok(!covers(host!, inner("a.test:8080")));
    assert.ok(covers(wild!, inner("x.w.test")));
    assert.ok(covers(wild!, inner("*.x.w.test")));
    assert.ok(covers(wild!, inner("*.w.test")));
    assert.ok(!covers(wild!, inner("w.test")));
    assert.ok(covers(port!, inner("p.test:81")));
    assert.ok(!covers(port!, inner("p.test")));
    assert.ok(covers(ip!, inner("127.0.0.1:9")));
    assert.ok(!covers(ip!, inner("127.0.0.2:9")));
  });
});
