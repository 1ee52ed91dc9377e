// What the gate exchanges with a server, apart from the decisions: the shapes of a guest's request and
// the gated response, the headers the host owns, the socket ledger that proves a run's connections
// closed with it, and the small parsers for what a server sends back (untrusted: bounded here).

import { lookup as dnsLookup } from "node:dns/promises";
import type * as net from "node:net";
import type { Duplex } from "node:stream";

export interface GuestRequest {
  url: string;
  method?: string;
  headers?: ReadonlyArray<readonly [string, string]>;
  body?: Uint8Array | undefined;
  redirect?: "follow" | "manual" | "error";
}

export interface GatedResponse {
  url: string;
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  redirected: boolean;
  body: BodyReader;
}

export interface BodyReader {
  /** The next chunk, or null at the end. Throws NetworkDeniedError when a byte cap is reached. */
  read(): Promise<Uint8Array | null>;
  cancel(): void;
}

/** A checked, connected TCP tunnel (CONNECT); `splice` joins it to the guest's side. */
export interface Tunnel {
  /** The address the host checked and connected to. */
  address: string;
  /** Relays bytes both ways (`head`: what the guest sent after its CONNECT line) until either side ends. */
  splice(peer: Duplex, head: Uint8Array): void;
}

/** Headers the host owns or that would let the guest step around the policy. */
export const DROPPED_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "accept-encoding",
  "proxy-authorization",
  "proxy-connection",
]);
export const CROSS_ORIGIN_DROPPED = new Set(["authorization", "cookie", "proxy-authorization"]);
export const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

export const systemResolver = async (hostname: string): Promise<string[]> =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Every socket the gate opened (for a request or a tunnel) until it closes. A socket belongs to one
 * run and must be destroyed when that run settles, whatever the path; `openSockets()` is how the host
 * (and its tests) checks that nothing of one run is still connected when the next begins.
 */
const sockets = new Set<net.Socket>();

export function track(socket: net.Socket): void {
  if (sockets.has(socket)) return;
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
}

/** Sockets the gate opened, in this process, that are not yet destroyed. */
export function openSockets(): number {
  let n = 0;
  for (const s of sockets) if (!s.destroyed) n++;
  return n;
}

export function splitTarget(target: string): [string, number] {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(target);
  return m ? [m[1] ?? "", Number(m[2])] : [target, 0];
}

/** Text safe for a status line, a header value or a message: printable ASCII only, at most `max` characters. */
export function printable(text: string, max = 300): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, max);
}

export function pairs(raw: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length && out.length < 256; i += 2)
    out.push([(raw[i] ?? "").toLowerCase(), raw[i + 1] ?? ""]);
  return out;
}
