// Request bodies for the HTTP server: read to their end before any answer, within bounds.
//
// A client sends its whole body before it reads the response. If the server answers early (a 413, a
// 401, a 503 refusal) and closes the socket while body bytes are still arriving, the kernel resets the
// connection and the client sees EPIPE or ECONNRESET instead of the answer — under load, that is a
// real client's request failing with no reason given. So every answer is written only once the body is
// read: what is past the cap is read and thrown away, not kept. That reading is bounded too: a body
// that declares, or turns out to be, longer than `discardLimit` is cut with its socket (that one
// client may then see a reset, which is all a sender of that much unasked-for data is owed), and so is
// its time: a refused body not in within SETTLE_MS is cut too, so a client without the token cannot
// hold a connection open by trickling a body it knows will be refused (an accepted body is bounded by
// Node's request timeout, as before).

import type { IncomingMessage } from "node:http";

/** An oversized or malformed body, with the status it is answered with. */
export class BodyError {
  readonly status: 400 | 413;
  readonly message: string;
  constructor(status: 400 | 413, message: string) {
    this.status = status;
    this.message = message;
  }
}

/** How much of a body past `max` is read and thrown away before the socket is cut instead. */
export const discardLimit = (max: number): number => Math.max(4 * max, 8 << 20);

/** How long the rest of a refused body may take to arrive before the socket is cut instead. */
export const SETTLE_MS = 10_000;

/**
 * Ends a request with its connection. The socket is destroyed first and by name: a request destroyed
 * mid-body (or left by a `for await`) was seen to keep its socket, still reading, for six seconds.
 */
function cut(req: IncomingMessage): undefined {
  req.socket.destroy();
  req.destroy();
  return undefined;
}

/**
 * Reads the rest of `req`, keeping at most `keep` bytes. Returns what was kept and the body's whole
 * size, or `undefined` if the body went past `limit` and the request was cut (destroyed with its socket).
 */
async function readBounded(
  req: IncomingMessage,
  keep: number,
  limit: number,
): Promise<{ chunks: Buffer[]; size: number } | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > limit) return cut(req);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) return cut(req);
    if (size <= keep) chunks.push(chunk);
  }
  return { chunks, size };
}

/** Reads a JSON body up to `max` bytes; an oversized or malformed body comes back as a BodyError. */
export async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const tooLarge = new BodyError(413, `request body is larger than ${max} bytes`);
  if (Number(req.headers["content-length"] ?? 0) > max) {
    await settleBody(req, max);
    return tooLarge;
  }
  const body = await readBounded(req, max, discardLimit(max));
  if (!body || body.size > max) return tooLarge;
  try {
    return JSON.parse(Buffer.concat(body.chunks).toString("utf8")) as unknown;
  } catch {
    return new BodyError(400, "request body is not valid JSON");
  }
}

/**
 * Reads and throws away whatever of the body has not been read, so an answer written after it reaches
 * the client; a body past the discard limit, or not in within `withinMs`, is cut instead. Never
 * rejects: a client that went away mid-body leaves nothing to answer.
 */
export async function settleBody(req: IncomingMessage, max: number, withinMs = SETTLE_MS): Promise<void> {
  if (req.complete || req.destroyed || req.readableEnded) return;
  const timer = setTimeout(() => cut(req), withinMs);
  try {
    await readBounded(req, 0, discardLimit(max));
  } catch {
    // The connection closed mid-body (the client went, or the cut above): nothing is owed.
  } finally {
    clearTimeout(timer);
  }
}
