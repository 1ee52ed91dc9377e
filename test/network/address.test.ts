import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classify, parseAddress } from "../../src/network/address.ts";

const kind = (text: string) => {
  const a = parseAddress(text);
  assert.ok(a, `${text} parses`);
  return classify(a);
};

describe("address classification", () => {
  it("parses canonical IPv4 and every IPv6 spelling, refuses the rest", () => {
    assert.equal(parseAddress("::ffff:127.0.0.1")?.address, "::ffff:7f00:1");
    assert.equal(parseAddress("0:0:0:0:0:0:0:1")?.address, "::1");
    assert.equal(parseAddress("FD00:EC2:0::254")?.address, "fd00:ec2::254");
    assert.equal(parseAddress("2001:db8:0:0:1:0:0:1")?.address, "2001:db8::1:0:0:1");
    for (const bad of [
      "127.1",
      "0x7f.0.0.1",
      "017.0.0.1",
      "2130706433",
      "1.2.3.256",
      "::1%lo",
      ":::",
      "1::2::3",
      "example.com",
      "",
    ])
      assert.equal(parseAddress(bad), undefined, bad);
  });

  it("names every non-public range", () => {
    const cases: Array<[string, string]> = [
      ["8.8.8.8", "public"],
      ["2606:4700::1111", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "cgnat"],
      ["169.254.1.1", "link-local"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["100.100.100.200", "metadata"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "reserved"],
      ["fc00::1", "private"],
      ["fe80::1", "link-local"],
      // IPv6 spellings of IPv4 addresses take the IPv4 address's class
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:169.254.169.254", "metadata"],
      ["::ffff:7f00:1", "loopback"],
      ["::127.0.0.1", "loopback"],
      ["64:ff9b::10.0.0.1", "private"],
      ["2002:7f00:1::", "loopback"],
      // ... and a translated public address is not treated as public either
      ["::ffff:8.8.8.8", "reserved"],
      ["2001:0:4136:e378::1", "reserved"],
    ];
    for (const [text, expected] of cases) assert.equal(kind(text), expected, text);
  });
});
