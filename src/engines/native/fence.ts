// Where one child's bytes end on a pipe every child of a warm parent shares (src/engines/native/parent.py).
//
// The parent writes a fence — NUL, ESC, `wasmcell-fence:`, 32 hex digits of a token, a newline — on
// the result, stdout and stderr pipes once a child is gone, and then tells the host the token on its
// control pipe. Everything before that fence is the child's. The token is drawn after the child died,
// so the child cannot write the real fence early: whatever it wrote that looks like one either is not
// at the end of the stream (then it is the child's data) or carries another token.
//
// Bytes flow through at once except a tail that could still become a fence (at most one fence long),
// so a guest's output streams live and this holds back a few dozen bytes at most.

const PREFIX = Buffer.from("\x00\x1bwasmcell-fence:", "latin1");
const TOKEN_CHARS = 32;
export const FENCE_BYTES = PREFIX.length + TOKEN_CHARS + 1;

/** The fence for `token` (32 lowercase hex digits), as the parent writes it. */
export function fenceFor(token: string): Buffer {
  if (!/^[0-9a-f]{32}$/.test(token))
    throw new RangeError(`a fence token is 32 hex digits, not ${JSON.stringify(token)}`);
  return Buffer.concat([PREFIX, Buffer.from(`${token}\n`, "latin1")]);
}

const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66);

/** Whether `tail` could be the start (or the whole) of some fence. */
function couldBeFence(tail: Buffer): boolean {
  for (let i = 0; i < tail.length; i++) {
    const b = tail[i]!;
    if (i < PREFIX.length) {
      if (b !== PREFIX[i]) return false;
    } else if (i < PREFIX.length + TOKEN_CHARS) {
      if (!isHex(b)) return false;
    } else if (i === PREFIX.length + TOKEN_CHARS) {
      if (b !== 0x0a) return false;
    } else return false;
  }
  return true;
}

export class Fence {
  #held: Buffer = Buffer.alloc(0);
  #sink: ((chunk: Buffer) => void) | undefined;
  /** Fences awaited now (a run's own and, once its child is gone, the parent's), by token. */
  readonly #waiting = new Map<string, { mark: Buffer; resolve: () => void }>();

  /** After a fence: what follows is held until the next sink is set (it belongs to the next run). */
  #paused = false;

  /** Where this stream's bytes go now (a run's output); undefined drops them. */
  set sink(sink: ((chunk: Buffer) => void) | undefined) {
    this.#sink = sink;
    this.#paused = false;
    if (sink) this.#drain();
  }

  push(chunk: Buffer): void {
    this.#held = this.#held.length ? Buffer.concat([this.#held, chunk]) : chunk;
    this.#drain();
  }

  /** Resolves once the fence for `token` has passed: every byte before it went to the sink. */
  until(token: string): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.set(token, { mark: fenceFor(token), resolve });
      this.#paused = false;
      this.#drain();
    });
  }

  /** Stops waiting for `token` (a child that died before writing its own fence). */
  forget(token: string): void {
    this.#waiting.delete(token);
  }

  #drain(): void {
    if (this.#paused) return;
    // The earliest awaited fence in what has arrived: what precedes it is the sink's.
    let hit: { token: string; at: number; mark: Buffer; resolve: () => void } | undefined;
    for (const [token, w] of this.#waiting) {
      const at = this.#held.indexOf(w.mark);
      if (at >= 0 && (!hit || at < hit.at)) hit = { token, at, ...w };
    }
    if (hit) {
      this.#emit(this.#held.subarray(0, hit.at));
      this.#held = Buffer.from(this.#held.subarray(hit.at + hit.mark.length));
      this.#waiting.delete(hit.token);
      hit.resolve();
      // Another fence still awaited (the parent's after a run's own): go on; else what follows is the next run's.
      if (this.#waiting.size > 0) this.#drain();
      else this.#paused = true;
      return;
    }
    // Keep the longest tail that could still be a fence; the rest is data.
    const from = Math.max(0, this.#held.length - FENCE_BYTES);
    let cut = this.#held.length;
    for (let i = from; i < this.#held.length; i++) {
      if (couldBeFence(this.#held.subarray(i))) {
        cut = i;
        break;
      }
    }
    if (cut > 0) {
      this.#emit(this.#held.subarray(0, cut));
      this.#held = Buffer.from(this.#held.subarray(cut));
    }
  }

  #emit(bytes: Buffer): void {
    if (bytes.length && this.#sink) this.#sink(Buffer.from(bytes));
  }
}
