// node:http ↔ web-standard Request/Response: the SDK's HTTP transports speak Request and Response (the
// shape every runtime has), the server is a node:http server (admission, drain and the guard work on
// its requests and sockets). The body is read and bounded by body.ts before anything here runs, so the
// Request carries none: the transports take the parsed body beside it.

import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The web Request for `req` (method, URL, headers; no body). Its signal aborts when the client goes
 * away before the answer is written, so the SDK cancels what the request started.
 */
export function toWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the client closed the connection"));
  });
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  return new Request(url, { method: req.method ?? "GET", headers, signal: abort.signal });
}

/**
 * Writes `response` to `res`: status and headers (beside any `res` already has, such as an
 * Mcp-Session-Id set before the SDK answered), then the body as it comes — an event stream is written
 * chunk by chunk and stays open until the SDK ends it or the client goes away.
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  if (res.headersSent || res.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  res.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      res.write(value);
    }
  } catch {
    // The stream failed or was cancelled because the client went away: nothing left to tell it.
  } finally {
    res.off("close", stop);
    res.end();
  }
}
