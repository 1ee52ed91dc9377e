// stdout + stderr of a process, capped together at `maxOutputBytes`. Past the cap the bytes are
// counted and dropped (the pipe keeps draining, so the guest never blocks on a full pipe and cannot
// grow host memory), and the text ends with a marker.

import type { OutputChunk } from "../../core/types.ts";
import { truncationMarker } from "../../kit/truncation.ts";

export class CappedOutput {
  readonly #limit: number;
  readonly #onOutput: ((chunk: OutputChunk) => void) | undefined;
  readonly #decoders = { stdout: new TextDecoder("utf-8"), stderr: new TextDecoder("utf-8") };
  readonly #text = { stdout: "", stderr: "" };
  #kept = 0;
  #finished = false;
  /** Bytes the guest wrote, before the cap. */
  total = 0;
  truncated = false;

  constructor(limit: number, onOutput?: (chunk: OutputChunk) => void) {
    this.#limit = limit;
    this.#onOutput = onOutput;
  }

  push(stream: "stdout" | "stderr", chunk: Buffer): void {
    if (this.#finished) return;
    this.total += chunk.byteLength;
    const room = this.#limit - this.#kept;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    if (kept.byteLength < chunk.byteLength) this.truncated = true;
    this.#kept += kept.byteLength;
    const text = this.#decoders[stream].decode(kept, { stream: true });
    this.#append(stream, text);
  }

  #append(stream: "stdout" | "stderr", text: string): void {
    if (!text) return;
    this.#text[stream] += text;
    if (this.#onOutput) {
      try {
        this.#onOutput({ stream, text });
      } catch {
        // a throwing callback must not break the run
      }
    }
  }

  /** Flushes the decoders and adds the marker (to stdout, or stderr when only stderr was written). */
  finish(): { stdout: string; stderr: string; outputTruncated: boolean } {
    this.#finished = true;
    for (const stream of ["stdout", "stderr"] as const) this.#append(stream, this.#decoders[stream].decode());
    if (this.truncated)
      this.#append(this.#text.stdout || !this.#text.stderr ? "stdout" : "stderr", truncationMarker(this.#limit));
    return { stdout: this.#text.stdout, stderr: this.#text.stderr, outputTruncated: this.truncated };
  }
}
