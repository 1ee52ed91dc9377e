// Request bodies for the HTTP server: read to their end before any answer, within bounds.
//
// A client sends its whole body before it reads the response. If the server answers early (a 413, a
// 401, a 503 refusal) and closes the socket while body bytes are still arriving, the kernel resets the
// connection and the client sees EPIPE or ECONNRESET instead of the answer — under load, that is a
// real client's request failing with no reason given. So every answer is written only once the body is
// read: what is past the cap is read and thrown away, not kept. That reading is bounded too: a body
// that declares, or turns out to be, longer than `discardLimit` is cut with its socket (that one
// client may then see a reset, which is all a sender of that much unasked-for data is owed), so no
// client can keep the server reading for ever; Node's request timeout bounds how slowly it may send.

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

/**
 * Reads the rest of `req`, keeping at most `keep` bytes. Returns what was kept and the body's whole
 * size, or `undefined` if the body went past `limit` and the request was cut (destroyed with its socket).
 */
async function readBounded(
  req: IncomingMessage,
  keep: number,
  limit: number,
): Promise<{ chunks: Buffer[]; size: number } | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > limit) return void req.destroy();
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving this loop early destroys the request, which is what a body past `limit` gets.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
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
 * the client; a body past the discard limit is cut instead. Never rejects: a client that went away
 * mid-body leaves nothing to answer.
 */
export async function settleBody(req: IncomingMessage, max: number): Promise<void> {
  if (req.complete || req.destroyed || req.readableEnded) return;
  try {
    await readBounded(req, 0, discardLimit(max));
  } catch {
    // The client closed the connection mid-body: the answer goes nowhere, and nothing is owed.
  }
}
