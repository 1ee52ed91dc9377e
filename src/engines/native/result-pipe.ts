// The driver's result pipe (fd 4), read as it arrives: display items come as lines of their own while
// the run goes (`{"display": {...}}`, each handed to the run's collector at once, so `onResult` sees
// it as it happens), and the result line comes last. Everything on it was written in the guest's own
// process: lines are split here and bounded (a display line by the item cap, the rest by what an
// honest result line can hold), and each display item is parsed by the one parser (kit/display.ts).

import type { DisplayItem, Limits } from "../../core/types.ts";
import { DisplayCollector } from "../../kit/display.ts";

const DISPLAY_PREFIX = Buffer.from('{"display":');
const NEWLINE = 0x0a;

export class ResultPipe {
  readonly display: DisplayCollector;
  /** The result line's bytes passed `resultCap`: the guest wrote to fd 4 itself. */
  overflow = false;
  readonly #resultCap: number;
  readonly #lineCap: number;
  #partial: Buffer[] = [];
  #partialBytes = 0;
  /** Bytes of non-display lines kept so far (only the last one is the result). */
  #kept = 0;
  #last: Buffer | undefined;
  /** Inside a line past the line cap: its bytes are dropped up to its end. */
  #skipping = false;

  constructor(limits: Limits, onResult: ((item: DisplayItem) => void) | undefined, resultCap: number) {
    this.display = new DisplayCollector(limits, onResult);
    this.#resultCap = resultCap;
    // JSON escapes a little of an item's text (quotes, newlines); twice the item cap is ample.
    this.#lineCap = Math.max(resultCap, 2 * limits.maxDisplayItemBytes + (64 << 10));
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, start)) {
      this.#append(chunk.subarray(start, at));
      if (!this.#skipping) this.#line(Buffer.concat(this.#partial, this.#partialBytes));
      this.#skipping = false;
      this.#partial = [];
      this.#partialBytes = 0;
      start = at + 1;
    }
    if (start < chunk.length) this.#append(chunk.subarray(start));
  }

  /** The text of the result line: the last line that is not a display item (undefined: none). */
  resultText(): string | undefined {
    const tail = this.#partialBytes > 0 ? Buffer.concat(this.#partial, this.#partialBytes) : undefined;
    if (tail && !isDisplay(tail)) return tail.toString("utf8");
    return this.#last?.toString("utf8");
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0 || this.#skipping) return;
    this.#partialBytes += bytes.length;
    if (this.#partialBytes > this.#lineCap) {
      // A line longer than any honest one, dropped to its end: its head says what it claims to be.
      const head = Buffer.concat([...this.#partial, bytes]).subarray(0, DISPLAY_PREFIX.length);
      if (isDisplay(head)) this.display.oversized();
      else this.overflow = true;
      this.#skipping = true;
      this.#partial = [];
      this.#partialBytes = 0;
      return;
    }
    this.#partial.push(bytes);
  }

  #line(line: Buffer): void {
    if (line.length === 0) return;
    if (isDisplay(line)) {
      let raw: unknown;
      try {
        raw = (JSON.parse(line.toString("utf8")) as { display?: unknown }).display;
      } catch {
        raw = undefined;
      }
      this.display.add(raw);
      return;
    }
    this.#kept += line.length;
    if (this.#kept > this.#resultCap) this.overflow = true;
    else this.#last = line;
  }
}

function isDisplay(line: Buffer): boolean {
  return line.subarray(0, DISPLAY_PREFIX.length).equals(DISPLAY_PREFIX);
}
