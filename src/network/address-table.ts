// The address table the gate classifies with, as data. Every row of the IANA IPv4 and IPv6
// Special-Purpose Address Registries is here with its RFC and the registry's "globally reachable"
// column, then the cloud metadata and credential endpoints, then the ranges outside those
// registries that are not public unicast either (multicast, IPv6 outside 2000::/3). The most
// specific row that covers an address decides its class; an address no row covers is public.
//
// `global` is the registry's column as published (undefined where it says N/A). `kind` is what the
// gate does: a row the registry calls not globally reachable is never public; a few it calls
// globally reachable are still refused, each saying why. Rows with `carries` hold an IPv4 address
// inside the IPv6 one; the gate classifies those by that IPv4 address (see address.ts).

/** What kind of address a request would reach. Everything but `public` is refused by default. */
export type AddressClass =
  "public" | "loopback" | "private" | "link-local" | "metadata" | "cgnat" | "multicast" | "unspecified" | "reserved";

/** Where an embedded IPv4 address sits in an IPv6 one. */
export type Embedding = "low32" | "6to4" | "teredo";

export interface AddressRow {
  /** The block, `base/bits`. */
  block: string;
  /** The registry's name for it, or what the endpoint is. */
  name: string;
  /** The defining document (RFC, or the provider's documentation). */
  source: string;
  /** The registry's "Globally Reachable" column; undefined for N/A or a row not from a registry. */
  global: boolean | undefined;
  kind: AddressClass;
  /** Why the gate's class differs from what `global` alone would say, where it does. */
  why?: string;
  carries?: Embedding;
}

const GATEWAY =
  "anycast to the nearest such server, which is normally the host's own gateway or a box inside its network";

/** IANA IPv4 Special-Purpose Address Registry, every row. */
export const IANA_V4: readonly AddressRow[] = [
  { block: "0.0.0.0/8", name: '"This network"', source: "RFC 791", global: false, kind: "unspecified" },
  { block: "0.0.0.0/32", name: '"This host on this network"', source: "RFC 1122", global: false, kind: "unspecified" },
  { block: "10.0.0.0/8", name: "Private-Use", source: "RFC 1918", global: false, kind: "private" },
  { block: "100.64.0.0/10", name: "Shared Address Space", source: "RFC 6598", global: false, kind: "cgnat" },
  { block: "127.0.0.0/8", name: "Loopback", source: "RFC 1122", global: false, kind: "loopback" },
  { block: "169.254.0.0/16", name: "Link Local", source: "RFC 3927", global: false, kind: "link-local" },
  { block: "172.16.0.0/12", name: "Private-Use", source: "RFC 1918", global: false, kind: "private" },
  { block: "192.0.0.0/24", name: "IETF Protocol Assignments", source: "RFC 6890", global: false, kind: "reserved" },
  {
    block: "192.0.0.0/29",
    name: "IPv4 Service Continuity Prefix",
    source: "RFC 7335",
    global: false,
    kind: "reserved",
  },
  { block: "192.0.0.8/32", name: "IPv4 dummy address", source: "RFC 7600", global: false, kind: "reserved" },
  {
    block: "192.0.0.9/32",
    name: "Port Control Protocol Anycast",
    source: "RFC 7723",
    global: true,
    kind: "reserved",
    why: GATEWAY,
  },
  {
    block: "192.0.0.10/32",
    name: "Traversal Using Relays around NAT Anycast",
    source: "RFC 8155",
    global: true,
    kind: "reserved",
    why: GATEWAY,
  },
  { block: "192.0.0.170/32", name: "NAT64/DNS64 Discovery", source: "RFC 8880", global: false, kind: "reserved" },
  { block: "192.0.0.171/32", name: "NAT64/DNS64 Discovery", source: "RFC 8880", global: false, kind: "reserved" },
  { block: "192.0.2.0/24", name: "Documentation (TEST-NET-1)", source: "RFC 5737", global: false, kind: "reserved" },
  { block: "192.31.196.0/24", name: "AS112-v4", source: "RFC 7535", global: true, kind: "public" },
  { block: "192.52.193.0/24", name: "AMT", source: "RFC 7450", global: true, kind: "public" },
  {
    block: "192.88.99.0/24",
    name: "Deprecated (6to4 Relay Anycast)",
    source: "RFC 7526",
    global: undefined,
    kind: "reserved",
    why: "withdrawn; what answers there is whichever relay is nearest",
  },
  { block: "192.88.99.2/32", name: "6a44-relay anycast address", source: "RFC 6751", global: false, kind: "reserved" },
  { block: "192.168.0.0/16", name: "Private-Use", source: "RFC 1918", global: false, kind: "private" },
  {
    block: "192.175.48.0/24",
    name: "Direct Delegation AS112 Service",
    source: "RFC 7534",
    global: true,
    kind: "public",
  },
  { block: "198.18.0.0/15", name: "Benchmarking", source: "RFC 2544", global: false, kind: "reserved" },
  { block: "198.51.100.0/24", name: "Documentation (TEST-NET-2)", source: "RFC 5737", global: false, kind: "reserved" },
  { block: "203.0.113.0/24", name: "Documentation (TEST-NET-3)", source: "RFC 5737", global: false, kind: "reserved" },
  { block: "240.0.0.0/4", name: "Reserved", source: "RFC 1112", global: false, kind: "reserved" },
  { block: "255.255.255.255/32", name: "Limited Broadcast", source: "RFC 8190", global: false, kind: "reserved" },
];

/** IANA IPv6 Special-Purpose Address Registry, every row. */
export const IANA_V6: readonly AddressRow[] = [
  { block: "::1/128", name: "Loopback Address", source: "RFC 4291", global: false, kind: "loopback" },
  { block: "::/128", name: "Unspecified Address", source: "RFC 4291", global: false, kind: "unspecified" },
  {
    block: "::ffff:0:0/96",
    name: "IPv4-mapped Address",
    source: "RFC 4291",
    global: false,
    kind: "reserved",
    carries: "low32",
  },
  {
    block: "64:ff9b::/96",
    name: "IPv4-IPv6 Translat.",
    source: "RFC 6052",
    global: true,
    kind: "reserved",
    why: "a NAT64 gateway the host cannot see past forwards it to the IPv4 address it carries",
    carries: "low32",
  },
  {
    block: "64:ff9b:1::/48",
    name: "IPv4-IPv6 Translat. (local use)",
    source: "RFC 8215",
    global: false,
    kind: "reserved",
  },
  { block: "100::/64", name: "Discard-Only Address Block", source: "RFC 6666", global: false, kind: "reserved" },
  { block: "100:0:0:1::/64", name: "Dummy IPv6 Prefix", source: "RFC 9780", global: false, kind: "reserved" },
  { block: "2001::/23", name: "IETF Protocol Assignments", source: "RFC 2928", global: false, kind: "reserved" },
  {
    block: "2001::/32",
    name: "TEREDO",
    source: "RFC 4380",
    global: undefined,
    kind: "reserved",
    why: "tunnels to an IPv4 address through a relay the host cannot check",
    carries: "teredo",
  },
  {
    block: "2001:1::1/128",
    name: "Port Control Protocol Anycast",
    source: "RFC 7723",
    global: true,
    kind: "reserved",
    why: GATEWAY,
  },
  { block: "2001:1::2/128", name: "TURN Anycast", source: "RFC 8155", global: true, kind: "reserved", why: GATEWAY },
  {
    block: "2001:1::3/128",
    name: "DNS-SD Service Registration Protocol Anycast",
    source: "RFC 9665",
    global: true,
    kind: "reserved",
    why: GATEWAY,
  },
  { block: "2001:2::/48", name: "Benchmarking", source: "RFC 5180", global: false, kind: "reserved" },
  { block: "2001:3::/32", name: "AMT", source: "RFC 7450", global: true, kind: "public" },
  { block: "2001:4:112::/48", name: "AS112-v6", source: "RFC 7535", global: true, kind: "public" },
  {
    block: "2001:10::/28",
    name: "Deprecated (previously ORCHID)",
    source: "RFC 4843",
    global: undefined,
    kind: "reserved",
    why: "withdrawn; not routed",
  },
  {
    block: "2001:20::/28",
    name: "ORCHIDv2",
    source: "RFC 7343",
    global: true,
    kind: "reserved",
    why: "cryptographic identifiers, not locators: not an address an HTTP server listens on",
  },
  {
    block: "2001:30::/28",
    name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
    source: "RFC 9374",
    global: true,
    kind: "reserved",
    why: "identifiers, not locators: not an address an HTTP server listens on",
  },
  { block: "2001:db8::/32", name: "Documentation", source: "RFC 3849", global: false, kind: "reserved" },
  {
    block: "2002::/16",
    name: "6to4",
    source: "RFC 3056",
    global: undefined,
    kind: "reserved",
    why: "tunnels to the IPv4 address it carries through a relay the host cannot check",
    carries: "6to4",
  },
  {
    block: "2620:4f:8000::/48",
    name: "Direct Delegation AS112 Service",
    source: "RFC 7534",
    global: true,
    kind: "public",
  },
  { block: "3fff::/20", name: "Documentation", source: "RFC 9637", global: false, kind: "reserved" },
  { block: "5f00::/16", name: "Segment Routing (SRv6) SIDs", source: "RFC 9602", global: false, kind: "reserved" },
  { block: "fc00::/7", name: "Unique-Local", source: "RFC 4193", global: false, kind: "private" },
  { block: "fe80::/10", name: "Link-Local Unicast", source: "RFC 4291", global: false, kind: "link-local" },
];

/**
 * Cloud metadata and credential endpoints. `privateAddresses` never opens these: only an allowlist
 * entry that names the address itself does. Whole blocks where the provider keeps several services
 * side by side, so one it adds later is covered too.
 */
export const CLOUD: readonly AddressRow[] = [
  {
    block: "169.254.169.0/24",
    name: "cloud instance metadata",
    source: "AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, Linode, Hetzner and others at .254",
    why: "AWS also keeps its DNS resolver at .253 and time sync at .123 here",
    global: undefined,
    kind: "metadata",
  },
  {
    block: "169.254.170.0/24",
    name: "AWS container credentials",
    source: "AWS ECS task metadata and credentials at .2, EKS Pod Identity Agent at .23",
    global: undefined,
    kind: "metadata",
  },
  {
    block: "169.254.0.23/32",
    name: "Tencent Cloud metadata",
    source: "Tencent Cloud CVM documentation",
    global: undefined,
    kind: "metadata",
  },
  {
    block: "169.254.42.42/32",
    name: "Scaleway metadata",
    source: "Scaleway instance documentation",
    global: undefined,
    kind: "metadata",
  },
  {
    block: "100.100.100.200/32",
    name: "Alibaba Cloud metadata",
    source: "Alibaba Cloud ECS documentation",
    global: undefined,
    kind: "metadata",
  },
  {
    block: "168.63.129.16/32",
    name: "Azure WireServer (host agent, DNS, health probes)",
    source: "Azure virtual network documentation",
    global: true,
    kind: "metadata",
    why: "a public address that every Azure VM reaches as its own host's agent",
  },
  {
    block: "192.0.0.192/32",
    name: "Oracle Cloud (classic) metadata",
    source: "Oracle Cloud documentation",
    global: false,
    kind: "metadata",
  },
  {
    block: "fd00:ec2::/32",
    name: "AWS instance metadata and credentials (IPv6)",
    source: "AWS IMDS at ::254, EKS Pod Identity Agent at ::23",
    why: "AWS also keeps its DNS resolver at ::253 and time sync at ::123 here",
    global: false,
    kind: "metadata",
  },
  {
    block: "fd20:ce::254/128",
    name: "Google Cloud metadata (IPv6)",
    source: "Google Compute Engine documentation",
    global: false,
    kind: "metadata",
  },
  {
    block: "fd00:c1::a9fe:a9fe/128",
    name: "Oracle Cloud metadata (IPv6)",
    source: "OCI documentation",
    global: false,
    kind: "metadata",
  },
  {
    block: "fd00:42::42/128",
    name: "Scaleway metadata (IPv6)",
    source: "Scaleway instance documentation",
    global: false,
    kind: "metadata",
  },
  {
    block: "fd00:a9fe:a9fe::1/128",
    name: "Akamai/Linode metadata (IPv6)",
    source: "Akamai Metadata service documentation",
    global: false,
    kind: "metadata",
  },
  {
    block: "fe80::a9fe:a9fe/128",
    name: "OpenStack and Linode metadata (IPv6 link-local)",
    source: "OpenStack Neutron metadata IPv6 spec",
    global: false,
    kind: "metadata",
  },
];

/** Ranges not in the special-purpose registries that are not public unicast either. */
export const OTHER: readonly AddressRow[] = [
  { block: "224.0.0.0/4", name: "Multicast", source: "RFC 5771", global: undefined, kind: "multicast" },
  { block: "ff00::/8", name: "Multicast", source: "RFC 4291", global: undefined, kind: "multicast" },
  {
    block: "::/96",
    name: "IPv4-compatible (deprecated)",
    source: "RFC 4291",
    global: undefined,
    kind: "reserved",
    carries: "low32",
  },
  {
    block: "::ffff:0:0:0/96",
    name: "IPv4-translated (SIIT)",
    source: "RFC 2765",
    global: undefined,
    kind: "reserved",
    carries: "low32",
  },
  { block: "fec0::/10", name: "Site-local (deprecated)", source: "RFC 3879", global: undefined, kind: "private" },
  // The IANA IPv6 Address Space registry allocates only 2000::/3 as global unicast; the rest is
  // reserved by the IETF (fc00::/7, fe80::/10, ff00::/8 and the rows above carve out their uses).
  { block: "::/0", name: "Outside global unicast", source: "RFC 4291", global: false, kind: "reserved" },
  { block: "2000::/3", name: "Global Unicast", source: "RFC 4291", global: true, kind: "public" },
];

export const ADDRESS_TABLE: readonly AddressRow[] = [...IANA_V4, ...IANA_V6, ...CLOUD, ...OTHER];
