// Request bodies for the HTTP server: a JSON body read within a size cap.

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

/** Reads a JSON body up to `max` bytes; an oversized or malformed body comes back as a BodyError. */
export async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > max) return new BodyError(413, `request body is larger than ${max} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > max) return new BodyError(413, `request body is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return new BodyError(400, "request body is not valid JSON");
  }
}
