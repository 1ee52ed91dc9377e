// Who may reach the MCP HTTP server, decided before a body is read or anything runs.
//
// - Loopback binds need no token: only local processes can connect. What remains is a web page in the
//   user's browser reaching 127.0.0.1 through DNS rebinding, so the Host header must name a loopback
//   host and an Origin header, when a browser sends one, must be a loopback origin.
// - Any other bind (0.0.0.0, a pod IP) is reachable by other machines, so it needs a bearer token; the
//   server refuses to start without one. The token is compared in constant time (both sides hashed to
//   the same length first, so neither the content nor the length leaks through timing). Origin is still
//   checked: a browser page must not ride on a token it does not have, and no MCP client sends Origin.

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { InvalidOptionError } from "../../core/errors.ts";

/** The shortest token accepted: anything shorter is guessable over a network. */
const MIN_TOKEN_CHARS = 16;

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Checks the bind address against the token; returns the token's digest (or undefined: no token). */
export function checkBind(host: string, token: string | undefined): Buffer | undefined {
  if (token !== undefined && token.length < MIN_TOKEN_CHARS) {
    throw new InvalidOptionError("token", `must be at least ${MIN_TOKEN_CHARS} characters (use a random value)`);
  }
  if (!isLoopbackHost(host) && token === undefined) {
    throw new InvalidOptionError(
      "host",
      `"${host}" is not a loopback address: other machines could run code through it, so it needs a bearer token (--token or WASMCELL_TOKEN)`,
    );
  }
  return token === undefined ? undefined : digest(token);
}

/** A reason to refuse the request (status + message), or undefined when it may proceed. */
export function checkRequest(
  req: IncomingMessage,
  options: { loopback: boolean; tokenDigest: Buffer | undefined },
): { status: 401 | 403; message: string } | undefined {
  if (options.loopback) {
    const host = hostnameOf(req.headers.host);
    if (host === undefined || !isLoopbackHost(host))
      return { status: 403, message: `Invalid Host header: ${req.headers.host ?? "(none)"}` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin))
    return { status: 403, message: `Invalid Origin header: ${origin}` };
  if (options.tokenDigest) {
    const auth = req.headers.authorization;
    const given = auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
    if (given === undefined || !timingSafeEqual(digest(given), options.tokenDigest))
      return { status: 401, message: "missing or wrong bearer token" };
  }
  return undefined;
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function hostnameOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return undefined;
  }
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
}
