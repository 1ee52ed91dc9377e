// Guest Python's one way out: a synchronous request to the host's gated fetch (net.py builds
// http.client and urllib on it). The sidecar has no network of its own. A request goes up the
// protocol channel as a `fetch` frame; the host applies the policy and answers with a `net` frame,
// read here synchronously from stdin (the event loop is not running while Python waits). The function
// Python holds is an arrow function with a null prototype that takes and returns a string: nothing
// reachable from it leads to the JS realm (no constructor, no prototype, no methods).

import type { NetReplyMessage } from "../protocol.ts";
import { send, waitForFrame } from "./channel.ts";
import { output } from "./output.ts";

let netSerial = 0;

function hostFetch(request: unknown): string {
  if (typeof request !== "string") return JSON.stringify({ ok: false, error: "network: bad request" });
  const seq = ++netSerial;
  send({ t: "fetch", id: output.id, seq, request });
  const reply = waitForFrame((m): m is NetReplyMessage => m.t === "net" && m.seq === seq);
  return reply.reply;
}

/** What net.py's `_wasmcell_net_connect` is handed. */
export const hostFetchForPython = (request: unknown): string => hostFetch(request);
Object.setPrototypeOf(hostFetchForPython, null);
