// IP address parsing and classification, pure (no I/O). The gate refuses every address that is not
// plainly public unless the allowlist entry names that very address: so a public name that resolves
// (or rebinds) to 127.0.0.1, 10.x, the cloud metadata service or a multicast group is refused, and
// so are the IPv6 spellings of those (IPv4-mapped, IPv4-compatible, NAT64, 6to4, ULA).

/** What kind of address a request would reach. Everything but `public` is refused by default. */
export type AddressClass =
  "public" | "loopback" | "private" | "link-local" | "metadata" | "cgnat" | "multicast" | "unspecified" | "reserved";

export interface ParsedAddress {
  family: 4 | 6;
  /** The canonical text (`127.0.0.1`, `::1`), as the connection will use it. */
  address: string;
  value: bigint;
}

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Parses a canonical dotted-quad IPv4 or an IPv6 address (no zone id). Undefined when it is neither. */
export function parseAddress(text: string): ParsedAddress | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return { family: 4, address: text, value: v4 };
  const v6 = parseV6(text);
  return v6 === undefined ? undefined : { family: 6, address: formatV6(v6), value: v6 };
}

function parseV4(text: string): bigint | undefined {
  if (!V4.test(text)) return undefined;
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseV6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.length > 45) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i] ?? "";
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseV4(item);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(item)) out.push(parseInt(item, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] ?? "");
  const tail = halves.length === 2 ? groups(halves[1] ?? "") : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<number>(missing).fill(0), ...tail];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function formatV6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(16 * (7 - i))) & 0xffffn));
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

type Range = [base: string, bits: number, kind: AddressClass];

const V4_RANGES: Range[] = [
  ["169.254.169.254", 32, "metadata"], // AWS/GCP/Azure/OpenStack instance metadata
  ["100.100.100.200", 32, "metadata"], // Alibaba Cloud metadata
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const V6_RANGES: Range[] = [
  ["fd00:ec2::254", 128, "metadata"], // AWS instance metadata over IPv6
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["100::", 64, "reserved"], // discard-only
  ["2001::", 32, "reserved"], // Teredo: tunnels to an IPv4 address the host cannot check
  ["2001:db8::", 32, "reserved"],
  ["fc00::", 7, "private"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

const compiled = (ranges: Range[], width: bigint) =>
  ranges.map(([base, bits, kind]) => {
    const parsed = parseAddress(base);
    if (!parsed) throw new Error(`bad range ${base}`);
    const shift = width - BigInt(bits);
    return { prefix: parsed.value >> shift, shift, kind };
  });
const V4_TABLE = compiled(V4_RANGES, 32n);
const V6_TABLE = compiled(V6_RANGES, 128n);

/** The IPv4 address an IPv6 address carries and would reach, if any (mapped, compatible, NAT64, 6to4). */
function embeddedV4(v6: bigint): bigint | undefined {
  const low32 = v6 & 0xffffffffn;
  if (v6 >> 32n === 0xffffn) return low32; // ::ffff:a.b.c.d (IPv4-mapped)
  if (v6 >> 32n === 0n && low32 > 1n) return low32; // ::a.b.c.d (IPv4-compatible, deprecated)
  if (v6 >> 32n === 0x0064ff9b0000000000000000n) return low32; // 64:ff9b::/96 (NAT64)
  if (v6 >> 112n === 0x2002n) return (v6 >> 80n) & 0xffffffffn; // 2002:aabb:ccdd::/16 (6to4)
  return undefined;
}

export function classify(address: ParsedAddress): AddressClass {
  if (address.family === 4) return classifyV4(address.value);
  const v4 = embeddedV4(address.value);
  if (v4 !== undefined) {
    const kind = classifyV4(v4);
    // A translated address is never treated as plainly public: the host cannot see where it lands.
    return kind === "public" ? "reserved" : kind;
  }
  for (const r of V6_TABLE) if (address.value >> r.shift === r.prefix) return r.kind;
  return "public";
}

function classifyV4(value: bigint): AddressClass {
  for (const r of V4_TABLE) if (value >> r.shift === r.prefix) return r.kind;
  return "public";
}
