// The network policy of one run, and the decisions the gate takes with it. Pure: the gate does the
// I/O (DNS, sockets) and asks this file, at each step, whether it may go on.

import { NetworkDeniedError } from "../core/errors.ts";
import { lookup, parseAddress, type ParsedAddress } from "./address.ts";
import { covers, defaultPort, matchRule, type AllowRule } from "./allowlist.ts";

/** Maps a host name to the addresses it has (IPv4 dotted quads or IPv6 text). Injectable for tests. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Caps and rules one run's requests are held to (all counted per run). */
export interface NetworkPolicy {
  rules: readonly AllowRule[];
  maxRequests: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  maxTotalBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Upper-case methods allowed, or undefined for any. */
  methods: readonly string[] | undefined;
  /** Undefined: the operating system's resolver (the gate's default). */
  resolve: Resolver | undefined;
}

/** The caps a run may lower (never raise). */
const NETWORK_CAPS = [
  "maxRequests",
  "maxRequestBytes",
  "maxResponseBytes",
  "maxTotalBytes",
  "timeoutMs",
  "maxRedirects",
] as const;
export type NetworkCap = (typeof NETWORK_CAPS)[number];

/**
 * A run's policy from the sandbox's and the request's: every request rule must be covered by a
 * sandbox rule (it inherits that rule's headers and privateAddresses), every cap is at most the
 * sandbox's, methods only a subset. Returns the problem as `[field, message]` when the request widens.
 */
export function narrowPolicy(
  outer: NetworkPolicy,
  inner: { rules?: readonly AllowRule[]; methods?: readonly string[] } & Partial<Record<NetworkCap, number>>,
): NetworkPolicy | [string, string] {
  let rules = outer.rules;
  if (inner.rules) {
    const narrowed: AllowRule[] = [];
    for (const [i, rule] of inner.rules.entries()) {
      const by = outer.rules.find((o) => covers(o, rule));
      if (!by) return [`allow[${i}]`, `"${rule.source}" is not covered by the sandbox's network.allow`];
      narrowed.push({ ...rule, headers: by.headers, privateAddresses: by.privateAddresses });
    }
    rules = narrowed;
  }
  const result: NetworkPolicy = { ...outer, rules };
  for (const cap of NETWORK_CAPS) {
    const v = inner[cap];
    if (v === undefined) continue;
    if (v > outer[cap]) return [cap, `is ${v}, above the sandbox's ${outer[cap]}; a run may only lower it`];
    result[cap] = v;
  }
  if (inner.methods) {
    const wanted = inner.methods.map((m) => m.toUpperCase());
    const extra = outer.methods && wanted.find((m) => !outer.methods?.includes(m));
    if (extra) return ["methods", `${extra} is not in the sandbox's network.methods`];
    result.methods = wanted;
  }
  return result;
}

export interface Target {
  url: URL;
  host: string;
  port: number;
  rule: AllowRule;
}

/** `host:port` as messages and events name it (IPv6 in brackets). */
export function targetName(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Step 1: the URL, scheme, method and allowlist. Throws NetworkDeniedError naming the host and why. */
export function checkTarget(policy: NetworkPolicy, rawUrl: string, method: string, via?: string): Target {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new NetworkDeniedError("scheme", "", `network: "${rawUrl.slice(0, 200)}" is not an absolute URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? defaultPort(url.protocol) : Number(url.port);
  const name = targetName(host, port);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new NetworkDeniedError(
      "scheme",
      name,
      `network: ${url.protocol} URLs are not supported (http and https only)`,
    );
  if (url.username || url.password)
    throw new NetworkDeniedError("scheme", name, `network: credentials in the URL are not allowed (${name})`);
  if (policy.methods && !policy.methods.includes(method))
    throw new NetworkDeniedError(
      "method",
      name,
      `network: ${method} ${name} refused: the method is not allowed (allowed: ${policy.methods.join(", ")})`,
    );
  const rule = matchRule(policy.rules, host, port, url.protocol);
  if (!rule) {
    const why = via ? `redirect from ${via} to a host that is not in the allowlist` : "not in the allowlist";
    throw new NetworkDeniedError(via ? "redirect" : "not-allowed", name, `network: ${name} refused: ${why}`);
  }
  return { url, host, port, rule };
}

/**
 * Step 2: the addresses the host's own DNS lookup gave (or the literal). Every one must be
 * acceptable — a name with one private address among public ones is refused — and the connection is
 * pinned to the first, so nothing is resolved again between this check and the connect.
 */
export function checkAddresses(target: Target, addresses: readonly string[]): ParsedAddress {
  const name = targetName(target.host, target.port);
  if (target.rule.kind === "address") {
    // Named literally by the application: the one case a non-public address is allowed.
    const literal = target.rule.address;
    if (!literal) throw new NetworkDeniedError("address", name, `network: ${name} refused: no address`);
    return literal;
  }
  if (addresses.length === 0)
    throw new NetworkDeniedError("dns", name, `network: ${name} refused: the name does not resolve`);
  const parsed: ParsedAddress[] = [];
  for (const text of addresses) {
    const a = parseAddress(text);
    if (!a) throw new NetworkDeniedError("dns", name, `network: ${name} refused: the resolver gave a bad address`);
    const { kind, row, carried } = lookup(a);
    // privateAddresses opens an internal service's own ranges; metadata, multicast, reserved and
    // unspecified addresses stay refused (a credential endpoint is link-local or ULA too).
    const internal = kind === "loopback" || kind === "private" || kind === "link-local" || kind === "cgnat";
    if (kind !== "public" && !(internal && target.rule.privateAddresses)) {
      const what = row ? ` (${carried ? `it carries ${carried}: ` : ""}${row.name}, ${row.source})` : "";
      throw new NetworkDeniedError(
        "address",
        name,
        `network: ${name} refused: it resolves to ${a.address}, a ${kind} address${what}; only an allowlist entry that names the address itself may reach it`,
      );
    }
    parsed.push(a);
  }
  return parsed[0] as ParsedAddress;
}
