// Threat: a host name the guest controls resolves to an address outside the public internet (a
// loopback service, a private network, a cloud credential endpoint) under a spelling the gate's
// table does not know. Every row of the table (the IANA IPv4 and IPv6 special-purpose registries,
// the cloud metadata endpoints, the other non-public ranges) is checked at its first and last
// address, and the addresses just outside it are checked to fall in the enclosing row.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classify, lookup, parseAddress } from "../../src/network/address.ts";
import { ADDRESS_TABLE, CLOUD, IANA_V4, IANA_V6, type AddressRow } from "../../src/network/address-table.ts";
import { checkAddresses, type Target } from "../../src/network/policy.ts";
import { parseAllowEntry } from "../../src/network/allowlist.ts";

const v4Text = (v: bigint) => [24n, 16n, 8n, 0n].map((s) => Number((v >> s) & 0xffn)).join(".");
const v6Text = (v: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((v >> BigInt(16 * (7 - i))) & 0xffffn).toString(16)).join(":");

function span(row: AddressRow) {
  const [base = "", bits = ""] = row.block.split("/");
  const parsed = parseAddress(base);
  assert.ok(parsed, row.block);
  const width = parsed.family === 4 ? 32n : 128n;
  const size = 1n << (width - BigInt(bits));
  const text = parsed.family === 4 ? v4Text : v6Text;
  const max = (1n << width) - 1n;
  return { first: parsed.value, last: parsed.value + size - 1n, text, max, family: parsed.family };
}

/** The row the table should pick for a value: the most specific one covering it. */
function expected(family: 4 | 6, value: bigint): AddressRow | undefined {
  let best: AddressRow | undefined;
  let bestBits = -1;
  for (const row of ADDRESS_TABLE) {
    const s = span(row);
    const bits = Number(row.block.split("/")[1]);
    if (s.family === family && value >= s.first && value <= s.last && bits > bestBits) [best, bestBits] = [row, bits];
  }
  return best;
}

const kindOf = (text: string) => {
  const a = parseAddress(text);
  assert.ok(a, text);
  return classify(a);
};

describe("address table", () => {
  for (const row of ADDRESS_TABLE) {
    it(`${row.block} (${row.name}, ${row.source}) is ${row.kind}`, () => {
      const { first, last, text, max, family } = span(row);
      for (const v of [first, last]) {
        const verdict = lookup(parseAddress(text(v))!);
        const want = expected(family, v);
        if (want?.carries) {
          // Classified by the IPv4 address inside: never public, and a non-public IPv4 keeps its class.
          assert.notEqual(verdict.kind, "public", text(v));
        } else {
          assert.equal(verdict.row, want, text(v));
          assert.equal(verdict.kind, want?.kind ?? "public", text(v));
        }
      }
      // Just outside: whatever encloses the row (or public), never this row.
      for (const v of [first - 1n, last + 1n]) {
        if (v < 0n || v > max) continue;
        const want = expected(family, v);
        if (want?.carries) continue;
        const verdict = lookup(parseAddress(text(v))!);
        assert.notEqual(verdict.row, row, text(v));
        assert.equal(verdict.kind, want?.kind ?? "public", text(v));
      }
    });
  }

  it("no block the registries call not globally reachable is public", () => {
    for (const row of [...IANA_V4, ...IANA_V6, ...CLOUD]) {
      if (row.global === false) assert.notEqual(row.kind, "public", row.block);
      if (row.global === true && row.kind !== "public") assert.ok(row.why, `${row.block} says why it is refused`);
    }
  });

  it("IPv6 spellings of an IPv4 address take that address's class, and a public one is not public", () => {
    const cases: Array<[string, string]> = [
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:169.254.170.2", "metadata"],
      ["::127.0.0.1", "loopback"],
      ["::ffff:0:127.0.0.1", "loopback"], // SIIT
      ["::ffff:0:169.254.169.254", "metadata"],
      ["::ffff:0:8.8.8.8", "reserved"],
      ["64:ff9b::10.0.0.1", "private"],
      ["64:ff9b::169.254.170.23", "metadata"],
      ["64:ff9b::8.8.8.8", "reserved"],
      ["64:ff9b:1::808:808", "reserved"], // RFC 8215 local-use NAT64
      ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "reserved"],
      ["2002:7f00:1::", "loopback"],
      ["2002:a9fe:a9fe::1", "metadata"],
      ["2002:808:808::1", "reserved"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"], // Teredo client 127.0.0.1
      ["2001:0:4136:e378::1", "reserved"],
    ];
    for (const [text, want] of cases) assert.equal(kindOf(text), want, text);
  });

  it("names the cloud credential endpoints as metadata, public or not", () => {
    for (const text of [
      "169.254.169.254",
      "169.254.170.2",
      "169.254.170.23",
      "169.254.0.23",
      "169.254.42.42",
      "100.100.100.200",
      "168.63.129.16",
      "192.0.0.192",
      "fd00:ec2::254",
      "fd00:ec2::23",
      "fd20:ce::254",
      "fd00:c1::a9fe:a9fe",
      "fd00:42::42",
      "fd00:a9fe:a9fe::1",
      "fe80::a9fe:a9fe",
    ])
      assert.equal(kindOf(text), "metadata", text);
    assert.equal(kindOf("168.63.129.15"), "public");
    assert.equal(kindOf("2a00:1450::1"), "public");
    assert.equal(kindOf("4000::1"), "reserved");
  });

  const target = (entry: Parameters<typeof parseAllowEntry>[0]): Target => ({
    url: new URL("http://svc.test/"),
    host: "svc.test",
    port: 80,
    rule: parseAllowEntry(entry),
  });

  it("privateAddresses opens internal ranges but never a credential endpoint", () => {
    const open = target({ host: "svc.test", privateAddresses: true });
    for (const ok of ["10.0.0.7", "169.254.1.1", "fd12::1", "::ffff:192.168.0.1"])
      assert.equal(checkAddresses(open, [ok]).address, parseAddress(ok)?.address, ok);
    for (const refused of ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "::ffff:169.254.170.2", "64:ff9b:1::a"])
      assert.throws(() => checkAddresses(open, [refused]), /metadata|reserved/, refused);
    assert.throws(
      () => checkAddresses(target("svc.test"), ["64:ff9b:1::808:808"]),
      /a reserved address \(IPv4-IPv6 Translat\. \(local use\), RFC 8215\)/,
    );
    assert.throws(
      () => checkAddresses(target("svc.test"), ["::ffff:0:7f00:1"]),
      /a loopback address \(it carries 127\.0\.0\.1: Loopback, RFC 1122\)/,
    );
  });

  it("an entry that names the endpoint literally still reaches it", () => {
    const literal = target("169.254.170.2");
    assert.equal(checkAddresses(literal, []).address, "169.254.170.2");
  });
});
