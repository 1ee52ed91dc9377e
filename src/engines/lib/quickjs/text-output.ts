// stdout/stderr capture with one byte cap over both streams, a visible truncation marker, and
// streaming of what was kept to the caller's onOutput.

import type { OutputChunk } from "../../../core/types.ts";
import { truncationMarker } from "../../../kit/truncation.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 byte length without allocating for the common ASCII case. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 2; // a surrogate pair is 4 bytes for 2 UTF-16 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

export class OutputSink {
  stdout = "";
  stderr = "";
  /** Bytes the guest tried to write (before the cap). */
  attempted = 0;
  truncated = false;
  #kept = 0;
  #cap: number;
  #onOutput: ((chunk: OutputChunk) => void) | undefined;

  constructor(cap: number, onOutput: ((chunk: OutputChunk) => void) | undefined) {
    this.#cap = cap;
    this.#onOutput = onOutput;
  }

  write(stream: "stdout" | "stderr", text: string): void {
    const bytes = utf8Length(text);
    this.attempted += bytes;
    if (this.truncated) return;
    let kept = text;
    if (this.#kept + bytes > this.#cap) {
      const room = this.#cap - this.#kept;
      kept = decoder.decode(encoder.encode(text).subarray(0, Math.max(0, room))).replace(/\uFFFD$/, "");
      kept += truncationMarker(this.#cap);
      this.truncated = true;
    }
    this.#kept += utf8Length(kept);
    if (stream === "stdout") this.stdout += kept;
    else this.stderr += kept;
    if (this.#onOutput) {
      try {
        this.#onOutput({ stream, text: kept });
      } catch {
        // A throwing listener is the caller's bug; it must not change the guest's run.
      }
    }
  }
}
