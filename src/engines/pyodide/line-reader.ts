// The host's reader for a sidecar's stdout: newline-delimited JSON objects, and raw byte runs (the
// snapshot). The sidecar is on the far side of the seal (a guest that broke out of Python owns its JS),
// so the framing is bounded: a line longer than `maxLine` is a protocol violation, found as soon as
// that many bytes are buffered without a newline, and never buffered further.

/** Why the channel is no longer usable; every later `next()` throws it again. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

export class LineReader {
  // Chunks are kept in a list and joined only when a whole line (or byte run) is needed: joining on
  // every chunk would copy a large line again for each of its ~64 KiB chunks.
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes of #chunks already searched for a newline (none found there). */
  #scanned = 0;
  #ended = false;
  #waiter: (() => void) | undefined;
  #error: ProtocolError | undefined;
  /** A line longer than this, in bytes, is a protocol violation (bounds what the host buffers). */
  maxLine: number;

  constructor(stream: NodeJS.ReadableStream, maxLine: number) {
    this.maxLine = maxLine;
    stream.on("data", (chunk: Buffer) => {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
      this.#wake();
    });
    const end = () => {
      this.#ended = true;
      this.#wake();
    };
    stream.on("end", end);
    stream.on("error", end);
  }

  #wake(): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.();
  }

  #wait(): Promise<void> {
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  #joined(): Buffer {
    if (this.#chunks.length > 1) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0] ?? Buffer.alloc(0);
  }

  #take(n: number, skip: number): Buffer {
    const all = this.#joined();
    // A copy of what is taken; the rest stays as a view until the next join.
    const out = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n + skip);
    this.#chunks = rest.length ? [rest] : [];
    this.#buffered = rest.length;
    this.#scanned = 0;
    return out;
  }

  #fail(message: string): never {
    this.#error = new ProtocolError(message);
    this.#chunks = [];
    this.#buffered = 0;
    throw this.#error;
  }

  /** The next JSON object, or undefined at the end of the stream. Throws ProtocolError on bad framing. */
  async next(): Promise<Record<string, unknown> | undefined> {
    for (;;) {
      if (this.#error) throw this.#error;
      if (this.#buffered > this.#scanned) {
        const all = this.#joined();
        const newline = all.indexOf(10, this.#scanned);
        if (newline >= 0) {
          if (newline > this.maxLine) this.#fail(`a protocol line is over ${this.maxLine} bytes`);
          const text = this.#take(newline, 1).toString("utf8");
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            this.#fail("a protocol line is not JSON");
          }
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
            this.#fail("a protocol line is not an object");
          return parsed as Record<string, unknown>;
        }
        this.#scanned = all.length;
      }
      if (this.#buffered > this.maxLine) this.#fail(`a protocol line is over ${this.maxLine} bytes`);
      if (this.#ended) return undefined;
      await this.#wait();
    }
  }

  /** Exactly `n` raw bytes, or undefined when the stream ends first. */
  async bytes(n: number): Promise<Uint8Array | undefined> {
    for (;;) {
      if (this.#error) throw this.#error;
      if (this.#buffered >= n) return this.#take(n, 0);
      if (this.#ended) return undefined;
      await this.#wait();
    }
  }
}
