// Allowlist entries: parsing (with a clear error for each bad entry), matching a request's host and
// port against them, and narrowing (a run's list may only name what the sandbox's list covers).
// Pure: no I/O, no Node APIs (WHATWG URL only, to canonicalise host names the way requests are).
//
// The entry forms:
//   "api.example.com"       that host only, on the default ports (80 for http, 443 for https)
//   "*.example.com"         any subdomain of example.com (not example.com itself), default ports
//   "api.example.com:8443"  that host on port 8443 only (either scheme)
//   "127.0.0.1:8080", "[::1]:8080", "10.0.0.5"   an IP literal: that address only
// An IP literal is the only way to reach a non-public address (loopback, private, link-local,
// metadata, …): a host name that resolves to one is refused unless its entry sets `privateAddresses`.

import { parseAddress, type ParsedAddress } from "./address.ts";

/** One allowlist entry in object form: the host pattern plus what the host adds to its requests. */
export interface NetworkAllowEntry {
  /** `host`, `*.domain`, either with an optional `:port`, or an IP literal (`127.0.0.1:8080`, `[::1]`). */
  host: string;
  /**
   * Headers the host adds to every request to this entry (an API key, say). The guest never sees
   * them: they are set after the guest's own headers (replacing any of the same name) and are not
   * carried to a redirect target outside this entry.
   */
  headers?: Record<string, string>;
  /**
   * Lets this host *name* resolve to loopback, private, link-local or CGNAT addresses (an internal
   * service). Metadata, multicast and reserved addresses stay refused. Default false.
   */
  privateAddresses?: boolean;
}

export type AllowEntryInput = string | NetworkAllowEntry;

export interface AllowRule {
  /** The entry as written (for messages and the tool description). */
  source: string;
  kind: "host" | "wildcard" | "address";
  /** Lowercase canonical host (for `wildcard`, the domain after `*.`); for `address`, the canonical IP. */
  host: string;
  /** The port named, or undefined for the scheme's default port only. */
  port: number | undefined;
  address: ParsedAddress | undefined;
  headers: ReadonlyArray<readonly [string, string]>;
  privateAddresses: boolean;
}

/** Thrown by parseAllowEntry; the caller turns it into an InvalidOptionError naming the field. */
export class AllowEntryError extends Error {}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the host owns; an application may not inject them either. */
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "upgrade", "te"]);

export function parseAllowEntry(input: AllowEntryInput): AllowRule {
  const entry = typeof input === "string" ? { host: input } : input;
  if (typeof entry !== "object" || entry === null || typeof entry.host !== "string")
    throw new AllowEntryError("must be a string or { host, headers?, privateAddresses? }");
  const unknown = Object.keys(entry).find((k) => !["host", "headers", "privateAddresses"].includes(k));
  if (unknown !== undefined)
    throw new AllowEntryError(`"${unknown}" is not an entry field (host, headers, privateAddresses)`);
  const text = entry.host.trim();
  if (text === "") throw new AllowEntryError("is empty");
  if (/[/?#@\s]|:\/\//.test(text))
    throw new AllowEntryError(`"${text}" must be a host with an optional :port, not a URL or a path`);
  let hostPart = text;
  let port: number | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    hostPart = bracket[1] ?? "";
    if (bracket[2] !== undefined) port = parsePort(bracket[2], text);
  } else if ((text.match(/:/g) ?? []).length === 1) {
    const at = text.lastIndexOf(":");
    hostPart = text.slice(0, at);
    port = parsePort(text.slice(at + 1), text);
  } else if (text.includes(":")) {
    throw new AllowEntryError(`"${text}": write an IPv6 address in brackets, e.g. "[::1]:8080"`);
  }
  const headers = parseHeaders(entry.headers, text);
  const privateAddresses = entry.privateAddresses === true;
  const address = parseAddress(hostPart);
  if (address) {
    return { source: text, kind: "address", host: address.address, port, address, headers, privateAddresses };
  }
  if (bracket) throw new AllowEntryError(`"${text}" is not an IPv6 address`);
  const wildcard = hostPart.startsWith("*.");
  const name = canonicalHost(wildcard ? hostPart.slice(2) : hostPart, text);
  if (wildcard && !name.includes("."))
    throw new AllowEntryError(`"${text}" covers a whole top-level domain; name a registered domain`);
  return {
    source: text,
    kind: wildcard ? "wildcard" : "host",
    host: name,
    port,
    address: undefined,
    headers,
    privateAddresses,
  };
}

function parsePort(text: string, entry: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new AllowEntryError(`"${entry}" has a bad port (1 to 65535)`);
  return port;
}

/** Lowercase, IDNA (punycode) form, one trailing dot dropped; refuses what is not a plain DNS name. */
function canonicalHost(name: string, entry: string): string {
  if (name.includes("*")) throw new AllowEntryError(`"${entry}": a wildcard may only be a leading "*."`);
  let canonical: string;
  try {
    canonical = new URL(`http://${name}/`).hostname;
  } catch {
    throw new AllowEntryError(`"${entry}" is not a valid host name`);
  }
  canonical = canonical.replace(/\.$/, "");
  const labels = canonical.split(".");
  if (canonical.length > 253 || !labels.every((l) => LABEL.test(l)))
    throw new AllowEntryError(`"${entry}" is not a valid host name`);
  // The URL parser turns numeric hosts (`2130706433`, `127.1`, `0x7f.1`) into IPv4: only the
  // canonical dotted quad counts as an IP literal.
  if (parseAddress(canonical)) throw new AllowEntryError(`"${entry}": write the IP address as ${canonical}`);
  return canonical;
}

function parseHeaders(headers: unknown, entry: string): Array<[string, string]> {
  if (headers === undefined) return [];
  if (typeof headers !== "object" || headers === null)
    throw new AllowEntryError(`"${entry}": headers must be an object`);
  return Object.entries(headers).map(([name, value]) => {
    if (!HEADER_NAME.test(name)) throw new AllowEntryError(`"${entry}": "${name}" is not a header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      throw new AllowEntryError(`"${entry}": the ${name} header is set by the host`);
    if (typeof value !== "string" || /[\r\n\0]/.test(value))
      throw new AllowEntryError(`"${entry}": header ${name} must be a string without CR, LF or NUL`);
    return [name.toLowerCase(), value] as [string, string];
  });
}

/** The default port of a scheme the gate speaks. */
export function defaultPort(protocol: string): number {
  return protocol === "https:" ? 443 : 80;
}

/**
 * The rule that lets `host:port` (host canonical, as WHATWG URL gives it, IPv6 without brackets) be
 * reached over `protocol`, or undefined. An exact host wins over a wildcard; an IP literal matches
 * only that address.
 */
export function matchRule(
  rules: readonly AllowRule[],
  host: string,
  port: number,
  protocol: string,
): AllowRule | undefined {
  const literal = parseAddress(host);
  const portOk = (r: AllowRule) => (r.port === undefined ? port === defaultPort(protocol) : r.port === port);
  let wildcard: AllowRule | undefined;
  for (const r of rules) {
    if (!portOk(r)) continue;
    if (literal) {
      if (r.kind === "address" && r.host === literal.address) return r;
      continue;
    }
    if (r.kind === "host" && r.host === host) return r;
    if (r.kind === "wildcard" && host.endsWith(`.${r.host}`)) wildcard ??= r;
  }
  return wildcard;
}

/**
 * Whether sandbox rule `outer` covers everything request rule `inner` allows. The request rule then
 * takes the sandbox rule's headers and privateAddresses: a request cannot add either.
 */
export function covers(outer: AllowRule, inner: AllowRule): boolean {
  if (outer.port !== inner.port) return false;
  if (outer.kind === "address" || inner.kind === "address")
    return outer.kind === inner.kind && outer.host === inner.host;
  if (outer.kind === "host") return inner.kind === "host" && inner.host === outer.host;
  return inner.host === outer.host ? inner.kind === "wildcard" : inner.host.endsWith(`.${outer.host}`);
}
