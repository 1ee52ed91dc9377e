// The host's side of guest Python's network: a sidecar's `fetch` frame is untrusted input (the
// sidecar ran guest code), parsed and bounded here, then handed to the run's gated fetch, which
// applies the whole policy. The answer goes back as a `net` frame: JSON text with plain data only
// (status, header pairs, the body as base64). A run without network gets a refusal at once, so
// guest code fails fast instead of waiting for its deadline.

import { NetworkDeniedError } from "../../core/errors.ts";
import type { RunNetwork } from "../../network/run-network.ts";
import { emitNoNetwork } from "../../network/open.ts";
import type { ResolvedRequest } from "../../options/index.ts";
import type { NetReplyMessage } from "./protocol.ts";

const MAX_HEADERS = 256;

/** Answers one `fetch` frame. Never throws: every failure is an answer the guest sees. */
export async function answerFetch(
  network: RunNetwork | undefined,
  frame: Record<string, unknown>,
  request: ResolvedRequest,
): Promise<NetReplyMessage> {
  const seq = typeof frame.seq === "number" && Number.isSafeInteger(frame.seq) ? frame.seq : -1;
  const reply = (body: object): NetReplyMessage => ({ t: "net", seq, reply: JSON.stringify(body) });
  if (!network) {
    emitNoNetwork(request.emit, "pyodide");
    return reply({ ok: false, denied: true, error: "network: this sandbox grants no network (the network option)" });
  }
  let parsed: { url: string; method: string; headers: Array<[string, string]>; body: Uint8Array | undefined };
  try {
    parsed = parseFrame(frame.request);
  } catch (error) {
    return reply({ ok: false, error: (error as Error).message });
  }
  try {
    const r = await network.fetchAll({ ...parsed, redirect: "manual" });
    return reply({
      ok: true,
      status: r.status,
      statusText: r.statusText,
      headers: r.headers,
      url: r.url,
      body: Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength).toString("base64"),
    });
  } catch (error) {
    const denied = error instanceof NetworkDeniedError;
    // A refused answer ("response") is the server's failing, not the guest's: an OSError like any
    // other failed request, not a PermissionError.
    return reply({
      ok: false,
      denied: denied && error.reason !== "timeout" && error.reason !== "response",
      timeout: denied && error.reason === "timeout",
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

function parseFrame(text: unknown): {
  url: string;
  method: string;
  headers: Array<[string, string]>;
  body: Uint8Array | undefined;
} {
  if (typeof text !== "string") throw new TypeError("network: bad request");
  const data = JSON.parse(text) as Record<string, unknown>;
  const { url, method, headers, body } = data;
  if (typeof url !== "string" || url.length > 16 * 1024) throw new TypeError("network: the URL must be a string");
  if (typeof method !== "string" || method.length > 32) throw new TypeError("network: bad method");
  if (!Array.isArray(headers) || headers.length > MAX_HEADERS) throw new TypeError("network: too many headers");
  const pairs: Array<[string, string]> = [];
  for (const h of headers as unknown[]) {
    if (!Array.isArray(h) || typeof h[0] !== "string" || typeof h[1] !== "string")
      throw new TypeError("network: bad header");
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(h[0]) || /[\0\r\n]/.test(h[1]) || h[1].length > 16 * 1024)
      throw new TypeError(`network: bad header ${h[0].slice(0, 40)}`);
    pairs.push([h[0], h[1]]);
  }
  if (body !== null && body !== undefined && typeof body !== "string") throw new TypeError("network: bad body");
  return { url, method, headers: pairs, body: body ? new Uint8Array(Buffer.from(body, "base64")) : undefined };
}
