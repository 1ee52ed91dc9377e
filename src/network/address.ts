// IP address parsing and classification, pure (no I/O). The gate refuses every address that is not
// plainly public unless the allowlist entry names that very address: so a public name that resolves
// (or rebinds) to 127.0.0.1, 10.x, the cloud metadata service or a multicast group is refused, and
// so are the IPv6 spellings of those (IPv4-mapped, IPv4-compatible, NAT64, 6to4, ULA).

import { ADDRESS_TABLE, type AddressClass, type AddressRow, type Embedding } from "./address-table.ts";

export type { AddressClass } from "./address-table.ts";

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

interface Compiled {
  row: AddressRow;
  bits: number;
  prefix: bigint;
  shift: bigint;
}

/** The table per family, most specific block first, so the first row that covers an address wins. */
function compile(family: 4 | 6): Compiled[] {
  const width = family === 4 ? 32n : 128n;
  const out: Compiled[] = [];
  for (const row of ADDRESS_TABLE) {
    const [base = "", bitsText = ""] = row.block.split("/");
    const parsed = parseAddress(base);
    const bits = Number(bitsText);
    if (!parsed || !/^\d{1,3}$/.test(bitsText) || bits > (parsed.family === 4 ? 32 : 128))
      throw new Error(`bad block ${row.block}`);
    if (parsed.family !== family) continue;
    const shift = width - BigInt(bits);
    if ((parsed.value >> shift) << shift !== parsed.value) throw new Error(`${row.block} has host bits set`);
    out.push({ row, bits, prefix: parsed.value >> shift, shift });
  }
  return out.sort((a, b) => b.bits - a.bits);
}
const V4_TABLE = compile(4);
const V6_TABLE = compile(6);

function rowOf(table: Compiled[], value: bigint): AddressRow | undefined {
  for (const r of table) if (value >> r.shift === r.prefix) return r.row;
  return undefined;
}

/** The IPv4 address an IPv6 address carries and would reach, by where its block puts it. */
function embeddedV4(v6: bigint, how: Embedding): bigint {
  if (how === "6to4") return (v6 >> 80n) & 0xffffffffn; // 2002:aabb:ccdd::/48
  if (how === "teredo") return (v6 & 0xffffffffn) ^ 0xffffffffn; // the client's address, obfuscated
  return v6 & 0xffffffffn; // mapped, compatible, SIIT, NAT64 /96: the low 32 bits
}

/** What an address is: its class, and the table row (with RFC or provider) that says so. */
export interface Verdict {
  kind: AddressClass;
  row: AddressRow | undefined;
  /** For an IPv6 address that carries an IPv4 one: that address, as text. */
  carried?: string;
}

export function lookup(address: ParsedAddress): Verdict {
  if (address.family === 4) {
    const row = rowOf(V4_TABLE, address.value);
    return { kind: row?.kind ?? "public", row };
  }
  const row = rowOf(V6_TABLE, address.value);
  if (row?.carries) {
    const v4 = embeddedV4(address.value, row.carries);
    const inner = rowOf(V4_TABLE, v4);
    const carried = [24n, 16n, 8n, 0n].map((s) => Number((v4 >> s) & 0xffn)).join(".");
    // The IPv4 address's own class where it is not public (metadata stays metadata, loopback stays
    // loopback); a translated public address is still not plainly public: the host cannot see where
    // the tunnel or translator delivers it.
    if (inner && inner.kind !== "public") return { kind: inner.kind, row: inner, carried };
    return { kind: row.kind, row, carried };
  }
  return { kind: row?.kind ?? "public", row };
}

export function classify(address: ParsedAddress): AddressClass {
  return lookup(address).kind;
}
