// The host side of the guest's `fetch`: four bridge functions over the run's gated fetch, and the
// hook that installs the guest side (fetch-guest.ts) into a context. Present only when the run has
// network; without it the guest has no `fetch` at all (a ReferenceError, at once).
//
// What crosses the bridge is data the host checks here: a numeric request id, a URL and method
// string, header pairs of strings, body chunks as base64 strings, a redirect mode. Nothing else of the
// guest's reaches the gate, and the gate applies the whole policy (src/network/).

import type { ResolvedRequest } from "../../../options/index.ts";
import { NetworkDeniedError } from "../../../core/errors.ts";
import type { BodyReader, GuestRequest, RunNetwork } from "../../../network/run-network.ts";
import type { HostFunction } from "../../../core/types.ts";
import type { RunScope } from "../../../kit/scope.ts";
import { NET_BRIDGE } from "./fetch-guest.ts";
import type { Guest } from "./guest.ts";
import { stashNetBridge } from "./runtime/install.ts";

const MAX_HEADERS = 256;
const MAX_HEADER_BYTES = 64 * 1024;
const MAX_OPEN = 64;
const installed = new WeakSet<Guest>();

/**
 * Whether the request's host functions already hold the bridge: the thread pool's host side ran
 * withNetwork (the gate must live where the policy and the sockets are) and the worker's engine only
 * proxies the calls. Callers cannot name a host function with the bridge's prefix (options refuse it),
 * so the names are proof the host granted the network.
 */
export function hasNetBridge(req: ResolvedRequest): boolean {
  return Object.hasOwn(req.hostFunctions, NET_BRIDGE.open);
}

/**
 * Opens the run's gate (src/network/), owned by the run's scope (closed, with every request and socket
 * under it, when the run settles), and returns the request with the bridge among its host functions
 * (fetch-gate.ts). The handle never reaches the caller: there is no way to hold it past the run.
 */
export type NetworkGate = (req: ResolvedRequest, scope: RunScope) => ResolvedRequest;

/**
 * Defines the run's bridge host functions and moves them into the families' internals, where the
 * `fetch` family (runtime/table.ts) finds them, before any user code runs. Once per context (a
 * session's later runs reach the same names, answered by each run's own bridge).
 */
export function installFetchBridge(guest: Guest): void {
  if (installed.has(guest)) return;
  const names = Object.values(NET_BRIDGE);
  guest.install(
    { console: false, timers: false, fs: false, hostFunctions: true, runtime: [], runtimeLazy: false },
    names,
  );
  stashNetBridge(guest, names);
  installed.add(guest);
}

export function bridge(network: RunNetwork, req: ResolvedRequest): Record<string, HostFunction> {
  const bodies = new Map<number, Uint8Array[]>();
  const pending = new Map<number, AbortController>();
  const readers = new Map<number, { reader: BodyReader; rest: Uint8Array | undefined }>();
  // base64 grows 4/3; stay well inside the host-call result cap.
  const chunkBytes = Math.max(3, Math.min(192 * 1024, Math.floor((req.limits.maxResultBytes * 0.7) / 4) * 3));
  const idOf = (v: unknown): number => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new TypeError("fetch: bad request id");
    return v;
  };
  return {
    [NET_BRIDGE.write]: ([id, chunk]) => {
      const key = idOf(id);
      if (typeof chunk !== "string") throw new TypeError("fetch: bad body chunk");
      const list = bodies.get(key) ?? [];
      const size = list.reduce((n, c) => n + c.byteLength, 0) + (chunk.length * 3) / 4;
      if (size > network.policy.maxRequestBytes + 4)
        throw new NetworkDeniedError(
          "limit",
          "",
          `network: the request body is over the ${network.policy.maxRequestBytes}-byte cap (network.maxRequestBytes)`,
        );
      list.push(Buffer.from(chunk, "base64"));
      bodies.set(key, list);
      if (bodies.size > MAX_OPEN) throw new TypeError("fetch: too many requests in flight");
      return undefined;
    },
    [NET_BRIDGE.open]: async ([id, init], context) => {
      const key = idOf(id);
      const request = checkInit(init);
      const parts = bodies.get(key);
      bodies.delete(key);
      if (parts) request.body = Buffer.concat(parts);
      if (pending.size + readers.size >= MAX_OPEN) throw new TypeError("fetch: too many requests in flight");
      const abort = new AbortController();
      pending.set(key, abort);
      try {
        const response = await network.fetch(request, AbortSignal.any([abort.signal, context.signal]));
        if (abort.signal.aborted) {
          response.body.cancel();
          throw new Error("aborted");
        }
        readers.set(key, { reader: response.body, rest: undefined });
        return {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
          url: response.url,
          redirected: response.redirected,
        };
      } finally {
        pending.delete(key);
      }
    },
    [NET_BRIDGE.read]: async ([id]) => {
      const entry = readers.get(idOf(id));
      if (!entry) return null;
      let chunk = entry.rest ?? (await entry.reader.read());
      if (!chunk) {
        readers.delete(idOf(id));
        return null;
      }
      entry.rest = chunk.byteLength > chunkBytes ? chunk.subarray(chunkBytes) : undefined;
      chunk = chunk.subarray(0, chunkBytes);
      return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("base64");
    },
    [NET_BRIDGE.cancel]: ([id]) => {
      const key = idOf(id);
      pending.get(key)?.abort();
      readers.get(key)?.reader.cancel();
      readers.delete(key);
      bodies.delete(key);
      return undefined;
    },
  };
}

function checkInit(init: unknown): GuestRequest {
  if (typeof init !== "object" || init === null) throw new TypeError("fetch: bad request");
  const { url, method, headers, redirect } = init as Record<string, unknown>;
  if (typeof url !== "string" || url.length > 16 * 1024) throw new TypeError("fetch: the URL must be a string");
  if (typeof method !== "string") throw new TypeError("fetch: the method must be a string");
  if (redirect !== "follow" && redirect !== "manual" && redirect !== "error")
    throw new TypeError("fetch: bad redirect mode");
  if (!Array.isArray(headers) || headers.length > MAX_HEADERS) throw new TypeError("fetch: too many headers");
  let size = 0;
  const pairs: Array<[string, string]> = [];
  for (const pair of headers) {
    if (!Array.isArray(pair) || typeof pair[0] !== "string" || typeof pair[1] !== "string")
      throw new TypeError("fetch: bad header");
    size += pair[0].length + pair[1].length;
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(pair[0]) || /[\0\r\n]/.test(pair[1]))
      throw new TypeError(`fetch: bad header ${pair[0].slice(0, 40)}`);
    pairs.push([pair[0], pair[1]]);
  }
  if (size > MAX_HEADER_BYTES) throw new TypeError("fetch: the headers are too large");
  return { url, method, headers: pairs, redirect };
}
