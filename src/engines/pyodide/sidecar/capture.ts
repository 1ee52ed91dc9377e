// Guest stdout/stderr: they reach the host only through Pyodide's write handlers, as `out` frames —
// decoded per stream, capped across both, forwarded while the run goes. Nothing the guest prints
// reaches the protocol channel raw.

import type { RunMessage } from "../protocol.ts";
import { send } from "./channel.ts";

export const output = {
  /** The current run's id (also on the network bridge's frames). */
  id: 0,
  limit: 0,
  /** From the run message: the host's one wording (src/kit/truncation.ts). */
  marker: "",
  forwarded: 0,
  attempted: 0,
  truncated: false,
  decoders: { stdout: new TextDecoder("utf-8"), stderr: new TextDecoder("utf-8") },
};

/** Resets the capture for a new run. */
export function startOutput(message: RunMessage): void {
  output.id = message.id;
  output.limit = message.limits.maxOutputBytes;
  output.marker = message.truncationMarker;
  output.forwarded = 0;
  output.attempted = 0;
  output.truncated = false;
}

/** Sends what the decoders still hold (an incomplete UTF-8 sequence at the end of the run). */
export function flushOutput(): void {
  for (const stream of ["stdout", "stderr"] as const) {
    const rest = output.decoders[stream].decode();
    if (rest && !output.truncated) send({ t: "out", id: output.id, stream, text: rest });
  }
}

export function writer(stream: "stdout" | "stderr") {
  return {
    write(buffer: Uint8Array): number {
      output.attempted += buffer.length;
      if (output.truncated) return buffer.length;
      let chunk = buffer;
      const room = output.limit - output.forwarded;
      if (chunk.length > room) chunk = chunk.subarray(0, Math.max(0, room));
      output.forwarded += chunk.length;
      let text = output.decoders[stream].decode(chunk, { stream: chunk.length === buffer.length });
      if (chunk.length < buffer.length) {
        output.truncated = true;
        text += output.marker;
      }
      if (text) send({ t: "out", id: output.id, stream, text });
      return buffer.length;
    },
  };
}
