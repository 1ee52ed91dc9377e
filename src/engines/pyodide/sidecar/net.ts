// Guest Python's one way out: a synchronous request to the host's gated fetch (net.py builds
// http.client and urllib on it). The sidecar has no network of its own. A request goes up the
// protocol channel as a `fetch` frame; the host applies the policy and answers with a `net` frame,
// read here synchronously from stdin (the event loop is not running while Python waits). Python
// reaches this only through the bridge device (bridge.ts): bytes in, bytes out, no JS object.

import type { NetReplyMessage } from "../protocol.ts";
import { send, waitForFrame } from "./channel.ts";
import { output } from "./capture.ts";

let netSerial = 0;

/** One request (the JSON text net.py builds) to the host's gated fetch; the host's JSON reply. */
export function hostFetch(request: string): string {
  const seq = ++netSerial;
  send({ t: "fetch", id: output.id, seq, request });
  const reply = waitForFrame((m): m is NetReplyMessage => m.t === "net" && m.seq === seq);
  return reply.reply;
}
